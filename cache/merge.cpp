// Merging caches and exporting winners (merge.hpp).
#include "cache/merge.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "core/error.hpp"

namespace i8g::cache {
namespace {

using KeyTuple = std::tuple<std::string, std::string, std::string, std::string, std::string>;
KeyTuple tuple_of(const BinaryKey& k) {
  return {k.name, k.arch, k.compiler_version, k.generator_hash, k.options_hash};
}

// Every field of a timing but the kernel id (ids differ between files) and the key.
using TimingTuple = std::tuple<std::string, int, std::string, std::optional<double>, std::optional<double>,
                               std::optional<double>, std::optional<double>, std::optional<double>,
                               std::optional<double>, int64_t>;
TimingTuple tuple_of(const Timing& t) {
  return {t.candidate, int(t.status), t.reason, t.eager_median_us, t.eager_p90_us, t.eager_min_us,
          t.graph_median_us, t.graph_p90_us, t.graph_min_us, t.created_at};
}

// Copies one kernel (with its blobs, re-checked by get_kernel) into `out`; returns its id there.
// With `name`, only a kernel of that name (a winner's id pointing elsewhere copies nothing).
int64_t copy_kernel(Cache& out, Cache& in, int64_t in_id, std::map<KeyTuple, std::string>& out_sha,
                    MergeReport& r, const std::string& name = "") {
  const std::optional<StoredKernel> k = in.get_kernel(in_id);
  if (!k || (!name.empty() && k->key.name != name)) return 0;
  auto it = out_sha.find(tuple_of(k->key));
  if (it != out_sha.end()) {
    ++r.kernels_present;
    if (it->second != k->binary_sha256)
      r.conflicts.push_back(fmt::format("kernel {}: {} holds another binary under this key (sha256 {}); kept the "
                                        "output's (sha256 {})",
                                        k->key.to_string(), in.path(), k->binary_sha256.substr(0, 12),
                                        it->second.substr(0, 12)));
  } else {
    ++r.kernels_added;
    out_sha.emplace(tuple_of(k->key), k->binary_sha256);
  }
  StoredKernel copy = *k;
  copy.id = 0;
  return out.put_kernel(copy);  // an existing entry's id when the key is there
}

std::map<KeyTuple, std::string> sha_by_key(Cache& c) {
  std::map<KeyTuple, std::string> m;
  for (const StoredKernel& k : c.list_kernels({})) m.emplace(tuple_of(k.key), k.binary_sha256);
  return m;
}

// Puts winner `w` (kernel id already the output's) unless the output's own is preferred.
void merge_winner(Cache& out, const Winner& w, const std::string& from, MergeReport& r) {
  const std::optional<Winner> have = out.get_winner(w.key);
  if (!have) {
    out.put_winner(w);
    ++r.winners_added;
    return;
  }
  if (have->candidate == w.candidate) {
    ++r.winners_same;
    return;
  }
  const bool take = winner_preferred(w, *have);
  r.conflicts.push_back(fmt::format("winner of {}: {} ({:.2f} us) from {} against {} ({:.2f} us) in the output; "
                                    "kept {}",
                                    w.key.to_string(), w.candidate, w.time_us, from, have->candidate,
                                    have->time_us, take ? w.candidate : have->candidate));
  if (take) {
    out.put_winner(w);
    ++r.winners_replaced;
  } else {
    ++r.winners_kept;
  }
}

}  // namespace

std::string input_problem(Cache& in) {
  const Cache::Audit a = in.audit();
  std::string why;
  if (a.integrity != "ok") why = "integrity check: " + a.integrity;
  auto ids = [](const std::vector<int64_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return v.size() > 8 ? s + fmt::format(" and {} more", v.size() - 8) : s;
  };
  if (!a.hash_mismatch.empty())
    why += fmt::format("{}{} binaries fail their sha256 (kernel ids {})", why.empty() ? "" : "; ",
                       a.hash_mismatch.size(), ids(a.hash_mismatch));
  if (!a.not_device_code.empty())
    why += fmt::format("{}{} binaries are not device code (kernel ids {})", why.empty() ? "" : "; ",
                       a.not_device_code.size(), ids(a.not_device_code));
  return why;
}

bool winner_preferred(const Winner& a, const Winner& b) {
  const double lo = std::min(a.time_us, b.time_us);
  const bool a_ok = a.time_us > 0, b_ok = b.time_us > 0;  // NaN or 0: not a time
  if (a_ok != b_ok) return a_ok;
  if (a_ok && std::abs(a.time_us - b.time_us) > kWinnerTieFraction * lo) return a.time_us < b.time_us;
  return a.candidate < b.candidate;
}

MergeReport merge_into(Cache& out, Cache& in) {
  MergeReport r;
  std::map<KeyTuple, std::string> out_sha = sha_by_key(out);
  std::map<int64_t, int64_t> id_map;  // in's kernel id -> out's
  for (const StoredKernel& k : in.list_kernels({})) id_map[k.id] = copy_kernel(out, in, k.id, out_sha, r);
  auto mapped = [&](int64_t id) {
    auto it = id_map.find(id);
    return it == id_map.end() ? int64_t(0) : it->second;
  };

  // Timings, grouped by key so that each key's existing rows are read once.
  std::vector<Timing> all = in.all_timings();
  std::map<std::string, std::vector<Timing>> by_key;
  std::map<std::string, TuneKey> keys;
  for (Timing& t : all) {
    const std::string s = t.key.to_string();
    keys.emplace(s, t.key);
    t.kernel_id = mapped(t.kernel_id);
    by_key[s].push_back(std::move(t));
  }
  for (auto& [s, rows] : by_key) {
    std::set<TimingTuple> have;
    for (const Timing& t : out.timings(keys.at(s))) have.insert(tuple_of(t));
    std::vector<Timing> add;
    for (Timing& t : rows) {
      if (have.insert(tuple_of(t)).second) add.push_back(std::move(t));
      else ++r.timings_present;
    }
    r.timings_added += int64_t(add.size());
    out.put_timings(add);
  }

  for (Winner w : in.list_winners()) {
    w.kernel_id = mapped(w.kernel_id);
    merge_winner(out, w, in.path(), r);
  }
  return r;
}

MergeReport export_winners(Cache& out, Cache& in) {
  MergeReport r;
  std::map<KeyTuple, std::string> out_sha = sha_by_key(out);
  // The utility module a winner's prepare loads: same arch, compiler and generator.
  std::set<std::tuple<std::string, std::string, std::string>> served;
  std::map<int64_t, int64_t> id_map;
  for (Winner w : in.list_winners()) {
    served.emplace(w.key.arch, w.key.compiler_version, w.key.generator_hash);
    const bool is_kernel = w.candidate.rfind("cublaslt:", 0) != 0;
    if (is_kernel) {
      auto it = id_map.find(w.kernel_id);
      int64_t id = it != id_map.end() ? it->second : 0;
      if (it == id_map.end() && w.kernel_id > 0) id = id_map[w.kernel_id] = copy_kernel(out, in, w.kernel_id, out_sha, r, w.candidate);
      if (id == 0) r.missing.push_back(fmt::format("{} (winner of {})", w.candidate, w.key.to_string()));
      w.kernel_id = id;
    }
    merge_winner(out, w, in.path(), r);
  }
  for (const StoredKernel& k : in.list_kernels({}))
    if (k.family == "utility" && served.count({k.key.arch, k.key.compiler_version, k.key.generator_hash}))
      copy_kernel(out, in, k.id, out_sha, r);
  return r;
}

}  // namespace i8g::cache
