// The AMD report joins two witnesses of one kernel in its code object: the metadata note
// (registers, LDS, scratch, spills) and the kernel descriptor (what the hardware will
// allocate), plus comgr's disassembly cut to the exact kernel symbol's address range. What is
// missing or disagrees goes to `notes`; nothing here throws for a bad code object.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <sstream>

#include "runtime/compile/amd_code_object.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/report/report.hpp"

namespace i8g {
namespace {

// Lines of `isa` whose "// <hex address>:" comment lies in [begin, end).
std::string slice_by_address(const std::string& isa, uint64_t begin, uint64_t end) {
  std::istringstream in(isa);
  std::string line, out;
  while (std::getline(in, line)) {
    const size_t c = line.find("// ");
    if (c == std::string::npos) continue;
    size_t used = 0;
    uint64_t addr = 0;
    try {
      addr = std::stoull(line.substr(c + 3, 16), &used, 16);
    } catch (...) {
      continue;
    }
    if (used == 0 || line.compare(c + 3 + used, 1, ":") != 0) continue;
    if (addr >= begin && addr < end) out += line + "\n";
  }
  return out;
}

std::map<std::string, int> amd_instruction_mix(const std::string& isa) {
  std::map<std::string, int> mix;
  std::istringstream in(isa);
  std::string line;
  int total = 0, mfma = 0, lds_read = 0, lds_write = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string op;
    if (!(words >> op) || op.find("//") == 0) continue;
    ++mix[op];
    ++total;
    mfma += op.rfind("v_mfma", 0) == 0;
    lds_read += op.rfind("ds_read", 0) == 0;
    lds_write += op.rfind("ds_write", 0) == 0;
  }
  mix["total"] = total;
  mix["mfma"] = mfma;
  mix["lds_read"] = lds_read;
  mix["lds_write"] = lds_write;
  return mix;
}

}  // namespace

ResourceReport make_amd_report(const Binary& b, const Target& t, int threads_per_block, int dynamic_smem_bytes) {
  ResourceReport r;
  r.symbol = b.lowered_name;
  r.threads_per_block = threads_per_block;
  r.dynamic_smem_bytes = dynamic_smem_bytes;
  AmdResources& a = r.amd;
  a.present = true;
  std::optional<AmdCodeObject> co;
  try {
    co = read_amd_code_object(b.image);
  } catch (const std::exception& e) {
    r.notes.push_back(std::string("code object unreadable: ") + e.what());
    r.sass_note = "no code object";
    return r;
  }
  a.target = co->target;
  if (co->target.find("--" + t.arch) == std::string::npos)
    r.notes.push_back(fmt::format("code object targets '{}', not {}", co->target, t.arch));
  const AmdKernelMeta* k = co->find_kernel(b.lowered_name);
  if (!k) {
    r.notes.push_back("kernel " + b.lowered_name + " not found in the code object's metadata");
  } else {
    a.vgprs = k->vgpr_count;
    a.agprs = k->agpr_count;
    a.sgprs = k->sgpr_count;
    a.lds_bytes = k->group_segment_fixed_size;
    a.scratch_bytes = k->private_segment_fixed_size;
    a.vgpr_spills = k->vgpr_spill_count;
    a.sgpr_spills = k->sgpr_spill_count;
    a.dynamic_stack = k->uses_dynamic_stack;
    a.wavefront_size = k->wavefront_size;
    r.registers = a.vgprs;
    r.static_smem_bytes = a.lds_bytes;
    r.stack_frame_bytes = a.scratch_bytes;
  }
  const AmdKernelDescriptor kd = co->descriptor(b.lowered_name);
  r.consistent = k && kd.found;
  if (!kd.found) r.notes.push_back("kernel descriptor " + b.lowered_name + ".kd not found");
  if (k && kd.found) {
    a.kd_lds_bytes = int(kd.group_segment_fixed_size);
    a.kd_scratch_bytes = int(kd.private_segment_fixed_size);
    a.kd_vgpr_blocks = kd.granulated_vgprs() + 1;
    a.kd_sgpr_blocks = kd.granulated_sgprs() + 1;
    auto agree = [&](bool ok, const std::string& what) {
      if (ok) return;
      r.consistent = false;
      r.notes.push_back(what);
    };
    agree(a.kd_lds_bytes == a.lds_bytes, fmt::format("LDS: metadata {} B, descriptor {} B", a.lds_bytes, a.kd_lds_bytes));
    agree(a.kd_scratch_bytes == a.scratch_bytes,
          fmt::format("scratch: metadata {} B, descriptor {} B", a.scratch_bytes, a.kd_scratch_bytes));
    // The descriptor allocates whole granules: the metadata count must fall in the last one.
    const int granule = std::max(t.vgpr_granule, 1);
    const int vneed = std::max(1, t.unified_vgprs ? a.vgprs : std::max(a.vgprs, a.agprs));
    agree(vneed <= a.kd_vgpr_blocks * granule && vneed > (a.kd_vgpr_blocks - 1) * granule,
          fmt::format("VGPRs: metadata {}, descriptor {} blocks of {}", vneed, a.kd_vgpr_blocks, granule));
    agree(a.sgprs <= a.kd_sgpr_blocks * 16,
          fmt::format("SGPRs: metadata {}, descriptor {} blocks of 16", a.sgprs, a.kd_sgpr_blocks));
  }
  if (a.vgpr_spills > 0 || a.sgpr_spills > 0)
    r.notes.push_back(fmt::format("spills {} VGPRs and {} SGPRs", a.vgpr_spills, a.sgpr_spills));
  if (a.dynamic_stack) r.notes.push_back("uses a dynamic stack");

  if (threads_per_block > 0 && k) {
    r.blocks_per_sm = estimate_amd_workgroups_per_cu(t, a.vgprs, a.agprs, a.sgprs, threads_per_block,
                                                     std::max(a.lds_bytes, 0) + std::max(dynamic_smem_bytes, 0),
                                                     &r.occupancy_limiter);
    const int waves_per_wg = (threads_per_block + t.warp_size - 1) / t.warp_size;
    a.waves_per_simd = double(r.blocks_per_sm * waves_per_wg) / t.simds_per_cu;
    r.occupancy = a.waves_per_simd / t.max_waves_per_simd;
    if (r.blocks_per_sm == 0) r.notes.push_back("cannot launch: " + r.occupancy_limiter + " exceed the CU's limit");
  } else {
    r.notes.push_back("occupancy unknown: no block size or register count");
  }

  const AmdFunction* f = co->find_function(b.lowered_name);
  if (!f) {
    r.sass_note = "kernel symbol " + b.lowered_name + " not found in the code object";
    return r;
  }
  try {
    const std::string all = amd_disassemble(b.image, t.arch);
    r.sass = slice_by_address(all, f->address, f->address + f->size);
    r.sass_available = !r.sass.empty();
    if (!r.sass_available) r.sass_note = "the disassembly has no instructions at the kernel's addresses";
  } catch (const std::exception& e) {
    r.sass_note = std::string("comgr disassembly failed: ") + e.what();
  }
  if (r.sass_available) {
    r.instruction_mix = amd_instruction_mix(r.sass);
    a.mfma = r.instruction_mix["mfma"];
  }
  return r;
}

nlohmann::json AmdResources::to_json() const {
  return {{"target", target}, {"vgprs", vgprs}, {"agprs", agprs}, {"sgprs", sgprs},
          {"lds_bytes", lds_bytes}, {"scratch_bytes", scratch_bytes}, {"vgpr_spills", vgpr_spills},
          {"sgpr_spills", sgpr_spills}, {"dynamic_stack", dynamic_stack}, {"wavefront_size", wavefront_size},
          {"kd_lds_bytes", kd_lds_bytes}, {"kd_scratch_bytes", kd_scratch_bytes},
          {"kd_vgpr_blocks", kd_vgpr_blocks}, {"kd_sgpr_blocks", kd_sgpr_blocks},
          {"waves_per_simd", waves_per_simd}, {"mfma", mfma}};
}

AmdResources AmdResources::from_json(const nlohmann::json& j) {
  AmdResources a;
  a.present = true;
  read_json_field(j, "target", a.target);
  read_json_field(j, "vgprs", a.vgprs);
  read_json_field(j, "agprs", a.agprs);
  read_json_field(j, "sgprs", a.sgprs);
  read_json_field(j, "lds_bytes", a.lds_bytes);
  read_json_field(j, "scratch_bytes", a.scratch_bytes);
  read_json_field(j, "vgpr_spills", a.vgpr_spills);
  read_json_field(j, "sgpr_spills", a.sgpr_spills);
  read_json_field(j, "dynamic_stack", a.dynamic_stack);
  read_json_field(j, "wavefront_size", a.wavefront_size);
  read_json_field(j, "kd_lds_bytes", a.kd_lds_bytes);
  read_json_field(j, "kd_scratch_bytes", a.kd_scratch_bytes);
  read_json_field(j, "kd_vgpr_blocks", a.kd_vgpr_blocks);
  read_json_field(j, "kd_sgpr_blocks", a.kd_sgpr_blocks);
  read_json_field(j, "waves_per_simd", a.waves_per_simd);
  read_json_field(j, "mfma", a.mfma);
  return a;
}

}  // namespace i8g
