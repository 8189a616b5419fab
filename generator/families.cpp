// The family table and the config fields their names may list. A new family adds its record's
// accessor here and one row to families() (docs/adding_a_family.md).
#include "generator/families.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "generator/problem_enums.hpp"

namespace i8g {

// Each defined in its generator/family_<name>.cpp.
const FamilyInfo& simt_dp4a_family();
const FamilyInfo& mma_sync_family();
const FamilyInfo& mfma_family();
const FamilyInfo& wgmma_family();
const FamilyInfo& wgmma_tma_family();
const FamilyInfo& decode_mma_family();

// Candidate order: NVIDIA targets get simt_dp4a, then mma_sync, then wgmma, wgmma_tma and
// decode_mma; AMD ones mfma.
const std::vector<const FamilyInfo*>& families() {
  static const std::vector<const FamilyInfo*> table = {
      &simt_dp4a_family(),
      &mma_sync_family(),
      &mfma_family(),
      &wgmma_family(),
      &wgmma_tma_family(),
      &decode_mma_family(),
  };
  return table;
}

const FamilyInfo& family_info(Family f) {
  for (const FamilyInfo* r : families())
    if (r->family == f) return *r;
  throw Error("family_info", fmt::format("family {} has no row in the family table", int(f)));
}

const std::vector<ConfigFieldInfo>& config_fields() {
  static const std::vector<ConfigFieldInfo> fields = {
      {ConfigField::thread_m, "tm", "thread_m", &KernelConfig::thread_m, 3},
      {ConfigField::thread_n, "tn", "thread_n", &KernelConfig::thread_n, 3},
      {ConfigField::warps_m, "wm", "warps_m", &KernelConfig::warps_m, 2},
      {ConfigField::warps_n, "wn", "warps_n", &KernelConfig::warps_n, 2},
      {ConfigField::instr, "ins", "instr", &KernelConfig::instr, 3},
      {ConfigField::warpgroups, "wg", "warpgroups", &KernelConfig::warpgroups, 2},
      {ConfigField::stages, "s", "stages", &KernelConfig::stages, 2},
      {ConfigField::split_k, "sk", "split_k", &KernelConfig::split_k, 3},
      {ConfigField::vec, "v", "vec", &KernelConfig::vec, 2},
      {ConfigField::schedule, "sc", "schedule", &KernelConfig::schedule, 1},
      {ConfigField::cluster_m, "cm", "cluster_m", &KernelConfig::cluster_m, 1},
      {ConfigField::warps_k, "wk", "warps_k", &KernelConfig::warps_k, 1},
      {ConfigField::cluster_k, "ck", "cluster_k", &KernelConfig::cluster_k, 1},
      {ConfigField::epilogue_store, "es", "epilogue_store", &KernelConfig::epilogue_store, 1},
      {ConfigField::packed_weight, "pw", "packed_weight", &KernelConfig::packed_weight, 1},
      {ConfigField::dynamic_schedule, "ds", "dynamic_schedule", &KernelConfig::dynamic_schedule, 1},
      {ConfigField::raster_group, "rg", "raster_group", &KernelConfig::raster_group, 2},
      {ConfigField::l2_hint, "lh", "l2_hint", &KernelConfig::l2_hint, 1},
      {ConfigField::pdl_trigger, "tr", "pdl_trigger", &KernelConfig::pdl_trigger, 1},
  };
  return fields;
}

const ConfigFieldInfo& field_info(ConfigField f) { return config_fields().at(size_t(f)); }

std::string pdl_trigger_reason(const KernelConfig& c, const Target& t) {
  if (c.pdl_trigger < 0 || c.pdl_trigger > 2)
    return fmt::format("pdl_trigger={} (need 0 none, 1 after the wait or 2 late)", c.pdl_trigger);
  if (c.pdl_trigger != 0 && t.sm < 90)
    return fmt::format("pdl_trigger={} on {} (griddepcontrol needs sm_90 or later)", c.pdl_trigger, t.arch);
  return {};
}

std::vector<TemplateArg> problem_template_args(const GemmProblem& p, bool with_layout) {
  std::vector<TemplateArg> a = {{"N_", p.n, true}, {"K_", p.k, true}};
  if (with_layout) a.push_back({"LAYOUT", device_code(p.layout)});
  a.push_back({"ACT", device_code(p.act_scale)});
  a.push_back({"WSC", device_code(p.weight_scale)});
  a.push_back({"OUT", device_code(p.out)});
  a.push_back({"BIAS", p.bias ? 1 : 0});
  a.push_back({"ASYM", p.asymmetric ? 1 : 0});
  return a;
}

}  // namespace i8g
