// The generator's entry points over the family table: validity, candidates, the untuned
// default and alignment; and the rules every family shares (vector width, occupancy, split-K).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/occupancy.hpp"
#include "generator/generator.hpp"
#include "generator/rules.hpp"
#include "templates/splitk.h"

namespace i8g {

int widest_vector(const GemmProblem& p) {
  for (int v : {16, 8, 4}) {
    const bool rows_ok = p.k % v == 0 && (p.layout == WeightLayout::nk || p.n % v == 0);
    if (rows_ok) return v;
  }
  return 1;
}

int blocks_per_sm(const KernelConfig& c, const Target& t) {
  const FamilyInfo& f = family_info(c.family);
  return estimate_blocks_per_sm(t, f.registers(c), f.threads(c), f.static_smem(c) + f.dynamic_smem(c), nullptr);
}

int workgroups_per_cu(const KernelConfig& c, const Target& t) {
  const FamilyInfo& f = family_info(c.family);
  return estimate_amd_workgroups_per_cu(t, f.registers(c), 0, 0, f.threads(c), f.static_smem(c) + f.dynamic_smem(c),
                                        nullptr);
}

std::vector<int> splits_to_offer(int64_t tiles, const Target& t, int max_waves, size_t keep,
                                 const std::function<bool(int split)>& usable) {
  std::vector<std::pair<double, int>> scored;
  if (tiles >= t.sm_count) return {};
  for (int s : {2, 3, 4, 6, 8, 12, 16}) {
    const int64_t blocks = tiles * s;
    if (blocks > int64_t(max_waves) * t.sm_count || !usable(s)) continue;
    const double waves = std::ceil(double(blocks) / t.sm_count);
    scored.push_back({-double(blocks) / (waves * t.sm_count), s});
  }
  std::sort(scored.begin(), scored.end());
  std::vector<int> out;
  for (size_t i = 0; i < scored.size() && i < keep; ++i) out.push_back(scored[i].second);
  return out;
}

std::string budget_reason(int smem, int regs, int threads, const Target& t, int reg_cap) {
  if (smem > t.smem_per_block_optin)
    return fmt::format("{} bytes of shared memory above the target's {} per block", smem, t.smem_per_block_optin);
  if (regs > std::min(reg_cap, t.max_regs_per_thread)) return fmt::format("~{} registers per thread", regs);
  if (regs * threads > t.regs_per_sm) return "one block needs more registers than an SM has";
  return {};
}

std::string split_k_range_reason(const KernelConfig& c) {
  if (c.split_k >= 1 && c.split_k <= splitk::kMaxSplit) return {};
  return fmt::format("split_k={} (need 1 to {})", c.split_k, splitk::kMaxSplit);
}

size_t splitk_workspace_bytes(int64_t tiles, const KernelConfig& c) {
  return size_t(splitk::workspace_words(tiles, c.split_k, c.bm, c.bn)) * 4;
}

namespace {

std::string vendor_mismatch(const FamilyInfo& f, const Target& t) {
  if (f.amd == t.amd) return {};
  if (f.amd) return fmt::format("{} needs an AMD CDNA target ({}), not {}", f.name,
                                fmt::join(Target::supported_amd_archs(), ", "), t.arch);
  std::string takes;
  for (const FamilyInfo* o : families())
    if (o->amd) takes += (takes.empty() ? "" : " or ") + std::string(o->name);
  return fmt::format("{} is an NVIDIA family; {} takes {}", f.name, t.arch, takes);
}

// Why `f` cannot run `p` on `t` at all, or "".
std::string unsupported(const FamilyInfo& f, const GemmProblem& p, const Target& t) {
  if (std::string why = p.invalid_reason(); !why.empty()) return why;
  if (std::string why = vendor_mismatch(f, t); !why.empty()) return why;
  return f.unsupported(p, t);
}

// A field the family does not use must keep its KernelConfig{} value: names leave it out.
std::string unused_field_reason(const FamilyInfo& f, const KernelConfig& c) {
  static const KernelConfig defaults;
  for (const ConfigFieldInfo& field : config_fields()) {
    if (std::find(f.name_fields.begin(), f.name_fields.end(), field.field) != f.name_fields.end()) continue;
    if (std::find(f.optional_name_fields.begin(), f.optional_name_fields.end(), field.field) !=
        f.optional_name_fields.end())
      continue;
    if (c.*field.member != defaults.*field.member)
      return fmt::format("{} does not use {} ({}={}; it must stay {})", f.name, field.name, field.name,
                         c.*field.member, defaults.*field.member);
  }
  return {};
}

// The family's candidates for p on t, each valid (empty when the family cannot run p).
std::vector<KernelConfig> family_candidates(const FamilyInfo& f, const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  if (!unsupported(f, p, t).empty()) return out;
  for (const KernelConfig& c : f.candidates(p, t))
    if (invalid_reason(p, c, t).empty()) out.push_back(c);
  return out;
}

}  // namespace

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  const FamilyInfo& f = family_info(c.family);
  if (std::string why = unsupported(f, p, t); !why.empty()) return why;
  if (std::string why = unused_field_reason(f, c); !why.empty()) return why;
  return f.invalid_reason(p, c, t);
}

std::vector<KernelConfig> trigger_twins(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  std::vector<KernelConfig> out;
  if (c.pdl_trigger != 0) return out;
  // invalid_reason refuses a trigger where the family has none (unused_field_reason) and below
  // sm_90 (pdl_trigger_reason).
  for (int trigger : {1, 2}) {
    KernelConfig v = c;
    v.pdl_trigger = trigger;
    if (invalid_reason(p, v, t).empty()) out.push_back(v);
  }
  return out;
}

std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  for (const FamilyInfo* f : families())
    for (const KernelConfig& c : family_candidates(*f, p, t)) out.push_back(c);
  return out;
}

namespace {

// The candidate of the lowest estimated cost; ties go to the first, so the choice is
// deterministic.
KernelConfig cheapest(const FamilyInfo& f, const std::vector<KernelConfig>& cs, const GemmProblem& p,
                      const Target& t, int64_t m) {
  const KernelConfig* best = nullptr;
  double best_cost = 0;
  for (const KernelConfig& c : cs) {
    const double cost = f.cost(p, c, t, m);
    if (!best || cost < best_cost) {
      best = &c;
      best_cost = cost;
    }
  }
  return *best;
}

}  // namespace

KernelConfig heuristic_default(const GemmProblem& p, const Target& t, int64_t m, Family family) {
  const FamilyInfo& f = family_info(family);
  const std::vector<KernelConfig> cs = family_candidates(f, p, t);
  if (cs.empty()) {
    const std::string why = unsupported(f, p, t);
    throw Error(ErrorKind::unsupported, "heuristic_default",
                fmt::format("no {} config suits {} on {}: {}", f.name, p.key(), t.arch,
                            why.empty() ? "no candidate fits the target (an experimental family offers "
                                                         "candidates only with its tune --experimental-* flag)"
                                                       : why));
  }
  return cheapest(f, cs, p, t, m);
}

// The family of the highest untuned rank that has a candidate it serves untuned at this M: the
// Hopper TMA family from M = 17 up on sm_90a, other tensor cores where the problem allows them,
// the reference family everywhere else, never an experimental family (rank 0).
KernelConfig heuristic_default(const GemmProblem& p, const Target& t, int64_t m) {
  std::vector<const FamilyInfo*> ranked;
  for (const FamilyInfo* f : families())
    if (f->untuned_rank > 0) ranked.push_back(f);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const FamilyInfo* a, const FamilyInfo* b) { return a->untuned_rank > b->untuned_rank; });
  for (const FamilyInfo* f : ranked) {
    std::vector<KernelConfig> cs = family_candidates(*f, p, t);
    if (f->serves_untuned)
      cs.erase(std::remove_if(cs.begin(), cs.end(), [&](const KernelConfig& c) { return !f->serves_untuned(p, c, t, m); }),
               cs.end());
    if (!cs.empty()) return cheapest(*f, cs, p, t, m);
  }
  throw Error(ErrorKind::unsupported, "heuristic_default",
              fmt::format("no kernel family suits {} on {}{}", p.key(), t.arch,
                          p.invalid_reason().empty() ? "" : ": " + p.invalid_reason()));
}

int required_alignment(const KernelConfig& c) { return family_info(c.family).alignment(c); }

bool raced_at(const KernelSpec& spec, int64_t m) {
  const FamilyInfo& f = family_info(spec.config.family);
  return f.races_at == nullptr || f.races_at(spec, m);
}

}  // namespace i8g
