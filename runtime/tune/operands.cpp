#include "runtime/tune/operands.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace i8g {

void fill_random(std::vector<int8_t>& v, std::mt19937_64& rng) {
  for (size_t i = 0; i < v.size(); i += 8) {
    uint64_t r = rng();
    for (size_t j = 0; j < 8 && i + j < v.size(); ++j, r >>= 8) v[i + j] = int8_t(int(r % 255) - 127);
  }
}

namespace {

// The buffers of `v` in fresh allocations, each made while its old one is still held; the old
// ones go to `held`.
void move_buffers(std::vector<DeviceBuffer>& v, CUstream st, bool copy, std::vector<std::vector<DeviceBuffer>>& held) {
  std::vector<DeviceBuffer> fresh;
  fresh.reserve(v.size());
  for (const DeviceBuffer& b : v) {
    fresh.emplace_back(b.bytes());
    if (copy && b.bytes())
      I8G_CU(cuMemcpyDtoDAsync(CUdeviceptr(fresh.back().get()), CUdeviceptr(b.get()), b.bytes(), st));
  }
  I8G_CU(cuStreamSynchronize(st));
  v.swap(fresh);
  held.push_back(std::move(fresh));
}

}  // namespace

void Operands::move(CUstream st) {
  move_buffers(x, st, true, moved_);
  move_buffers(w, st, true, moved_);
  move_buffers(out, st, false, moved_);  // written by every launch, read only after a launch
  move_buffers(colsum, st, true, moved_);
  for (auto& [name, v] : packed_w) move_buffers(v, st, true, moved_);
}

Operands::Operands(Engine& e, const GemmProblem& prob, int64_t rows, std::mt19937_64& rng, CUstream st,
                   const std::vector<PackedWeightLayout>& packs)
  : p(prob), m(rows) {
  const size_t xb = size_t(m * p.k), wb = size_t(p.n * p.k);
  out_bytes = size_t(m * p.n) * out_element_size(p.out);
  const int sets = int(std::clamp<size_t>(kRotationBytes / (xb + wb + out_bytes) + 1, 1, kMaxSets));
  host.m = m;
  std::vector<int8_t> hx(xb), hw(wb);
  for (int i = 0; i < sets; ++i) {
    fill_random(hx, rng);
    fill_random(hw, rng);
    x.emplace_back(xb).upload(hx);
    w.emplace_back(wb).upload(hw);
    out.emplace_back(out_bytes);
    for (const PackedWeightLayout& l : packs) packed_w[l.name()].emplace_back(size_t(l.bytes())).upload(pack_weight(l, hw.data()));
    if (i == 0) {
      host.x = hx;
      host.w = hw;
    }
  }
  std::uniform_real_distribution<float> scale(0.5f / 127, 2.0f / 127), b(-1.0f, 1.0f);
  std::uniform_int_distribution<int32_t> z(-20, 20);
  host.x_scale.resize(p.act_scale == ActScale::per_token ? size_t(m) : 1);
  host.w_scale.resize(p.weight_scale == WeightScale::per_channel ? size_t(p.n) : 1);
  for (float& v : host.x_scale) v = scale(rng);
  for (float& v : host.w_scale) v = scale(rng);
  x_scale = DeviceBuffer(host.x_scale.size() * 4);
  x_scale.upload(host.x_scale);
  w_scale = DeviceBuffer(host.w_scale.size() * 4);
  w_scale.upload(host.w_scale);
  if (p.bias) {
    host.bias.resize(size_t(p.n));
    for (float& v : host.bias) v = b(rng);
    bias = DeviceBuffer(host.bias.size() * 4);
    bias.upload(host.bias);
  }
  if (p.asymmetric) {
    host.x_zero_point.resize(p.act_scale == ActScale::per_token ? size_t(m) : 1);
    for (int32_t& v : host.x_zero_point) v = z(rng);
    zp = DeviceBuffer(host.x_zero_point.size() * 4);
    zp.upload(host.x_zero_point);
    host.w_colsum = weight_colsum(p, host.w);
    for (int i = 0; i < sets; ++i) {
      colsum.emplace_back(size_t(p.n) * 4);
      e.weight_colsum(p, w[size_t(i)].get<int8_t>(), colsum.back().get<int32_t>(), st);
    }
  }
}

const std::vector<DeviceBuffer>& Operands::packed(const PackedWeightLayout& l) const {
  const auto it = packed_w.find(l.name());
  if (it == packed_w.end())
    throw Error(ErrorKind::internal, "operands", fmt::format("the weight sets were not packed as {}", l.name()));
  return it->second;
}

}  // namespace i8g
