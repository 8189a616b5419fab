// The AMD audit (tools/inspect_amd.hpp). AMD entries are compiled and audited only: no AMD
// GPU runs them here.
#include "tools/inspect_amd.hpp"

#include <fmt/format.h>

#include "generator/families.hpp"
#include "generator/types.hpp"
#include "runtime/report/amd_ir.hpp"

namespace i8g::cli {
namespace {

// What the entry's config implies, from its name (rows are untrusted: unchecked when it does
// not parse).
void expect_from_name(const std::string& name, AmdIrExpectations& e) {
  try {
    const KernelSpec spec = KernelSpec::parse_name(name);
    const FamilyInfo& f = family_info(spec.config.family);
    if (!f.matrix_instructions || spec.config.bk <= 0) return;
    e.config_mfma = f.matrix_instructions(spec.config);
    e.k_steps = spec.problem.k > 0 ? (spec.problem.k + spec.config.bk - 1) / spec.config.bk : -1;
  } catch (const std::exception&) {
  }
}

}  // namespace

// The seed's acceptance checks, on the code object's own fields: the exact kernel symbol is
// found, metadata and descriptor agree, nothing spills or uses scratch, the ISA has MFMAs.
// A failed check rejects the candidate (severity "reject": a non-zero exit).
void audit_amd(const cache::StoredKernel& k, const ResourceReport& rep, std::vector<Finding>& out) {
  const AmdResources& a = rep.amd;
  if (!a.present || a.vgprs < 0 || a.sgprs < 0 || a.lds_bytes < 0 || a.scratch_bytes < 0 || a.vgpr_spills < 0)
    out.push_back({"reject", k.key.name, "kernel " + rep.symbol + " has no metadata in its code object"});
  if (a.vgpr_spills > 0 || a.sgpr_spills > 0)
    out.push_back({"reject", k.key.name, fmt::format("spills {} VGPRs and {} SGPRs", a.vgpr_spills, a.sgpr_spills)});
  if (a.scratch_bytes > 0) out.push_back({"reject", k.key.name, fmt::format("uses {} B of scratch per lane", a.scratch_bytes)});
  if (a.dynamic_stack) out.push_back({"reject", k.key.name, "uses a dynamic stack"});
  if (!rep.consistent)
    out.push_back({"reject", k.key.name, "metadata and kernel descriptor disagree: " + fmt::format("{}", fmt::join(rep.notes, "; "))});
  if (!rep.sass_available) out.push_back({"warning", k.key.name, "no ISA: " + rep.sass_note});
  else if (a.mfma == 0) out.push_back({"reject", k.key.name, "no v_mfma instruction in the kernel's ISA"});
  if (rep.occupancy > 0 && rep.occupancy < 0.25)
    out.push_back({"warning", k.key.name, fmt::format("{:.2f} waves per SIMD (limited by {})", a.waves_per_simd, rep.occupancy_limiter)});
}


void audit_amd_ir(cache::Cache& c, const cache::StoredKernel& k, const ResourceReport* rep, std::vector<Finding>& out) {
  std::string ir;
  try {
    const std::optional<cache::StoredKernel> full = c.get_kernel(k.id);
    if (!full) return;
    ir = full->ir;
  } catch (const std::exception& e) {
    out.push_back({"error", k.key.name, std::string("IR not read: ") + e.what()});
    return;
  }
  AmdIrExpectations e;
  e.symbol = k.lowered_name;
  expect_from_name(k.key.name, e);
  if (rep) {
    if (rep->sass_available) e.isa_mfma = rep->amd.mfma;
    if (rep->amd.present && rep->amd.lds_bytes >= 0) e.lds_bytes = rep->amd.lds_bytes;
  }
  for (const AmdIrFinding& f : i8g::audit_amd_ir(ir, e))
    out.push_back({f.severity, k.key.name, f.kernel == e.symbol ? f.what : "kernel " + f.kernel + ": " + f.what});
}

}  // namespace i8g::cli
