#include "runtime/tune/measure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "runtime/tune/reference.hpp"

namespace i8g {
namespace {

// The CPU reference for a few whole rows of the output, compared with `got` (bytes of set 0).
std::string spot_check(const Operands& ops, const std::vector<uint8_t>& got) {
  const GemmProblem& p = ops.p;
  const size_t es = out_element_size(p.out);
  for (int64_t row : {int64_t(0), ops.m / 2, ops.m - 1}) {
    HostOperands one = ops.host;
    one.m = 1;
    one.x.assign(ops.host.x.begin() + row * p.k, ops.host.x.begin() + (row + 1) * p.k);
    if (p.act_scale == ActScale::per_token) one.x_scale = {ops.host.x_scale[size_t(row)]};
    if (p.asymmetric && p.act_scale == ActScale::per_token) one.x_zero_point = {ops.host.x_zero_point[size_t(row)]};
    const std::vector<uint8_t> want = reference_output(p, one);
    if (std::memcmp(want.data(), got.data() + size_t(row * p.n) * es, want.size()) != 0)
      return fmt::format("row {} differs from the CPU reference", row);
  }
  return {};
}

std::string compare(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, const GemmProblem& p) {
  if (want == got) return {};
  const size_t es = out_element_size(p.out);
  for (size_t i = 0; i < want.size(); i += es)
    if (std::memcmp(&want[i], &got[i], es) != 0)
      return fmt::format("output differs from the reference first at (m={}, n={})", int64_t(i / es) / p.n,
                         int64_t(i / es) % p.n);
  return "output differs";
}

}  // namespace

Measurer::Measurer(Operands& ops, CUstream stream, const TimingPlan& plan, double prune_factor)
    : ops_(ops), stream_(stream), plan_(plan), prune_factor_(prune_factor), ref_(ops.out_bytes),
      got_(ops.out_bytes) {
  plan_.rotation = ops.sets();
}

void Measurer::take_reference(const Launch& launch) {
  ops_.out[0].fill(0xff);
  launch(0);
  I8G_CU(cuStreamSynchronize(stream_));
  ops_.out[0].download(ref_.data(), ref_.size());
  if (std::string why = spot_check(ops_, ref_); !why.empty())
    throw Error("autotune", fmt::format("{} M={}: the reference itself is wrong: {}", ops_.p.key(), ops_.m, why));
}

void Measurer::measure(CandidateResult& c, const Launch& launch) {
  try {
    ops_.out[0].fill(0xff);
    launch(0);
    I8G_CU(cuStreamSynchronize(stream_));
    ops_.out[0].download(got_.data(), got_.size());
    if (std::string why = compare(ref_, got_, ops_.p); !why.empty()) {
      c.status = cache::CandidateStatus::rejected;
      c.reason = why;
      return;
    }
    const Stats probe = time_eager(launch, stream_, TimingPlan{3, 3, 5});
    if (pruned(probe.median_us, best_probe_, prune_factor_)) {
      c.status = cache::CandidateStatus::ok;
      c.eager = probe;
      c.reason = prune_reason(probe.median_us, best_probe_, prune_factor_);
      return;
    }
    best_probe_ = std::min(best_probe_, probe.median_us);
    c.eager = time_eager(launch, stream_, plan_);
    c.graph = time_graph(launch, stream_, plan_);
    c.status = cache::CandidateStatus::ok;
  } catch (const Error& e) {
    c.status = cache::CandidateStatus::failed;
    c.reason = e.what();
    c.eager.reset();  // a failure during the graph timing leaves no half measurement behind
    c.graph.reset();
    driver().cuStreamSynchronize(stream_);
  }
}

void Measurer::final_round(std::vector<CandidateResult>& cs, const std::vector<size_t>& which,
                           const std::vector<Launch>& launches, int placements, double warmup_ms) {
  placements = std::max(placements, 1);
  TimingPlan plan = plan_;
  plan.warmup_ms = std::max(warmup_ms, 0.0);
  std::vector<std::vector<Stats>> by_finalist(launches.size());
  try {
    for (int r = 0; r < placements; ++r) {
      if (r > 0) ops_.move(stream_);
      const std::vector<Stats> st = time_graphs_interleaved(launches, stream_, plan);
      for (size_t i = 0; i < st.size(); ++i) by_finalist[i].push_back(st[i]);
    }
  } catch (const Error&) {
    driver().cuStreamSynchronize(stream_);
    ops_.release_moved();
    throw;
  }
  ops_.release_moved();
  for (size_t i = 0; i < which.size(); ++i) {
    CandidateResult& c = cs[which[i]];
    c.reason = final_round_reason(c.graph->median_us, which.size(), by_finalist[i]);
    c.graph = median_placement(by_finalist[i]);
    c.placement_us.clear();
    for (const Stats& st : by_finalist[i]) c.placement_us.push_back(st.median_us);
    c.finalist = true;
  }
}

}  // namespace i8g
