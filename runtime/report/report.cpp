// make_report joins three independent witnesses of one kernel: ptxas's log (the only source of
// spill counts), the CUBIN's ELF attributes, and nvdisasm's SASS (unless told to skip it: prepare
// spawns no helper). Each may be missing; what is missing or disagrees is said in `notes`, never
// thrown.
#include "runtime/report/report.hpp"

#include <fmt/format.h>

#include <climits>

#include "runtime/report/cubin_elf.hpp"
#include "runtime/report/disasm.hpp"
#include "runtime/report/ptxas_log.hpp"

namespace i8g {

const char* const kSassSkipped =
    "not disassembled: prepare spawns no nvdisasm; `i8gemm inspect show` disassembles it on demand";

namespace {

void fill_sass(ResourceReport& r, const std::vector<uint8_t>& image, int symbol_index) {
  Disassembly d = disassemble(image, symbol_index);
  r.sass_available = d.ok;
  r.sass_note = d.note;
  if (d.ok) {
    r.sass = std::move(d.sass);
    r.instruction_mix = instruction_mix(r.sass);
  }
}

}  // namespace

void add_sass(ResourceReport& r, const std::vector<uint8_t>& image) {
  int symbol_index = -1;
  try {
    const CubinInfo info = read_cubin(image);
    if (const CubinKernel* k = info.find(r.symbol)) symbol_index = int(k->symbol_index);
  } catch (const std::exception&) {  // nvdisasm says what is wrong with the image
  }
  fill_sass(r, image, symbol_index);
}

ResourceReport make_report(const Binary& b, const Target& t, int threads_per_block, int dynamic_smem_bytes,
                           Sass sass) {
  if (t.amd) return make_amd_report(b, t, threads_per_block, dynamic_smem_bytes);
  ResourceReport r;
  r.symbol = b.lowered_name;
  r.threads_per_block = threads_per_block;
  r.dynamic_smem_bytes = dynamic_smem_bytes;

  auto fns = parse_ptxas_log(b.log);
  auto f = fns.find(b.lowered_name);
  if (f == fns.end()) {
    r.notes.push_back("no ptxas resource lines for " + b.lowered_name + " in the log");
  } else {
    const PtxasFunction& p = f->second;
    r.registers = p.registers;
    r.stack_frame_bytes = p.stack_frame_bytes;
    r.spill_store_bytes = p.spill_store_bytes;
    r.spill_load_bytes = p.spill_load_bytes;
    r.barriers = p.barriers;
    r.cmem0_bytes = p.cmem0_bytes;
    // ptxas leaves out "N bytes smem" when N is 0; a "Used" line without it means 0.
    r.static_smem_bytes = p.smem_bytes >= 0 ? p.smem_bytes : (p.registers >= 0 ? 0 : -1);
  }

  int symbol_index = -1;
  try {
    CubinInfo info = read_cubin(b.image);
    if (const CubinKernel* k = info.find(b.lowered_name)) {
      r.elf_registers = k->registers;
      r.elf_stack_frame_bytes = k->frame_size;
      r.elf_static_smem_bytes = k->static_smem_bytes;
      symbol_index = static_cast<int>(k->symbol_index);
    } else {
      r.notes.push_back("kernel " + b.lowered_name + " not found in the CUBIN");
    }
  } catch (const std::exception& e) {
    r.notes.push_back(std::string("CUBIN unreadable: ") + e.what());
  }

  // No ptxas lines for the kernel (seen on the H200 for the utility module a prepare compiled,
  // 2026-12-01): the CUBIN's own figures stand in; spills stay unknown (the ELF has none).
  const bool from_elf = f == fns.end() && symbol_index >= 0;
  if (from_elf) {
    r.registers = r.elf_registers;
    r.stack_frame_bytes = r.elf_stack_frame_bytes;
    r.static_smem_bytes = r.elf_static_smem_bytes;
    r.notes.push_back("registers, stack frame and static smem from the CUBIN");
  }
  r.consistent = true;
  auto agree = [&](const char* field, int log_value, int elf_value) {
    if (log_value >= 0 && log_value == elf_value) return;
    r.consistent = false;
    r.notes.push_back(fmt::format("{}: ptxas log says {}, CUBIN says {}", field, log_value, elf_value));
  };
  agree("registers", r.registers, r.elf_registers);
  agree("stack frame bytes", r.stack_frame_bytes, r.elf_stack_frame_bytes);
  agree("static smem bytes", r.static_smem_bytes, r.elf_static_smem_bytes);

  const int regs = r.registers >= 0 ? r.registers : r.elf_registers;
  const int smem = std::max(0, r.static_smem_bytes >= 0 ? r.static_smem_bytes : r.elf_static_smem_bytes) +
                   std::max(0, dynamic_smem_bytes);
  if (threads_per_block > 0 && regs >= 0) {
    r.blocks_per_sm = estimate_blocks_per_sm(t, regs, threads_per_block, smem, &r.occupancy_limiter,
                                             std::max(0, r.barriers));
    const int warp = t.warp_size > 0 ? t.warp_size : 32;
    const int max_warps = t.max_threads_per_sm / warp;
    if (max_warps > 0)
      r.occupancy = double(r.blocks_per_sm * ((threads_per_block + warp - 1) / warp)) / max_warps;
    if (r.blocks_per_sm == 0) r.notes.push_back("cannot launch: " + r.occupancy_limiter + " exceed the SM's limit");
  } else {
    r.notes.push_back("occupancy unknown: no block size or register count");
  }

  if (sass == Sass::disassemble)
    fill_sass(r, b.image, symbol_index);
  else
    r.sass_note = kSassSkipped;
  return r;
}

void read_json_int(const nlohmann::json& v, const char* key, int& out) {
  if (!v.is_number_integer())
    throw Error("ResourceReport::from_json", fmt::format("{} is not an integer: {}", key, v.dump().substr(0, 40)));
  if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(INT_MAX)
                             : v.get<int64_t>() < INT_MIN || v.get<int64_t>() > INT_MAX)
    throw Error("ResourceReport::from_json", fmt::format("{} = {} does not fit an int", key, v.dump()));
  out = int(v.get<int64_t>());
}

nlohmann::json ResourceReport::to_json() const {
  nlohmann::json j{{"symbol", symbol},
                        {"registers", registers},
                        {"stack_frame_bytes", stack_frame_bytes},
                        {"spill_store_bytes", spill_store_bytes},
                        {"spill_load_bytes", spill_load_bytes},
                        {"static_smem_bytes", static_smem_bytes},
                        {"barriers", barriers},
                        {"cmem0_bytes", cmem0_bytes},
                        {"elf_registers", elf_registers},
                        {"elf_stack_frame_bytes", elf_stack_frame_bytes},
                        {"elf_static_smem_bytes", elf_static_smem_bytes},
                        {"consistent", consistent},
                        {"threads_per_block", threads_per_block},
                        {"dynamic_smem_bytes", dynamic_smem_bytes},
                        {"blocks_per_sm", blocks_per_sm},
                        {"occupancy", occupancy},
                        {"occupancy_limiter", occupancy_limiter},
                        {"sass_available", sass_available},
                        {"sass", sass},
                        {"sass_note", sass_note},
                        {"instruction_mix", instruction_mix},
                        {"notes", notes}};
  if (amd.present) j["amd"] = amd.to_json();
  return j;
}

ResourceReport ResourceReport::from_json(const nlohmann::json& j) {
  ResourceReport r;
  try {
    read_json_field(j, "symbol", r.symbol);
    read_json_field(j, "registers", r.registers);
    read_json_field(j, "stack_frame_bytes", r.stack_frame_bytes);
    read_json_field(j, "spill_store_bytes", r.spill_store_bytes);
    read_json_field(j, "spill_load_bytes", r.spill_load_bytes);
    read_json_field(j, "static_smem_bytes", r.static_smem_bytes);
    read_json_field(j, "barriers", r.barriers);
    read_json_field(j, "cmem0_bytes", r.cmem0_bytes);
    read_json_field(j, "elf_registers", r.elf_registers);
    read_json_field(j, "elf_stack_frame_bytes", r.elf_stack_frame_bytes);
    read_json_field(j, "elf_static_smem_bytes", r.elf_static_smem_bytes);
    read_json_field(j, "consistent", r.consistent);
    read_json_field(j, "threads_per_block", r.threads_per_block);
    read_json_field(j, "dynamic_smem_bytes", r.dynamic_smem_bytes);
    read_json_field(j, "blocks_per_sm", r.blocks_per_sm);
    read_json_field(j, "occupancy", r.occupancy);
    read_json_field(j, "occupancy_limiter", r.occupancy_limiter);
    read_json_field(j, "sass_available", r.sass_available);
    read_json_field(j, "sass", r.sass);
    read_json_field(j, "sass_note", r.sass_note);
    read_json_field(j, "instruction_mix", r.instruction_mix);
    read_json_field(j, "notes", r.notes);
    if (j.contains("amd")) r.amd = AmdResources::from_json(j.at("amd"));  // absent in NVIDIA and older JSON
  } catch (const nlohmann::json::exception& e) {
    throw Error("ResourceReport::from_json", e.what());
  }
  return r;
}

bool ResourceReport::operator==(const ResourceReport& o) const { return to_json() == o.to_json(); }

std::string ResourceReport::to_text() const {
  auto opt = [](int v) { return v >= 0 ? std::to_string(v) : std::string("?"); };
  std::string s = fmt::format("kernel        {}\n", symbol);
  if (amd.present) {
    s += fmt::format("target        {} (compiled and audited only: no AMD GPU runs it here)\n", amd.target);
    s += fmt::format("VGPRs         {} (AGPRs {}), SGPRs {}\n", opt(amd.vgprs), opt(amd.agprs), opt(amd.sgprs));
    s += fmt::format("LDS           {} B (descriptor {} B), scratch {} B (descriptor {} B)\n", opt(amd.lds_bytes),
                     opt(amd.kd_lds_bytes), opt(amd.scratch_bytes), opt(amd.kd_scratch_bytes));
    s += fmt::format("spills        {} VGPRs, {} SGPRs; dynamic stack {}\n", opt(amd.vgpr_spills),
                     opt(amd.sgpr_spills), amd.dynamic_stack ? "yes" : "no");
    s += fmt::format("metadata vs descriptor {}\n", consistent ? "consistent" : "DIFFERENT");
    s += fmt::format("occupancy     {} workgroups/CU x {} threads = {:.2f} waves/SIMD = {:.0f}% (limited by {})\n",
                     blocks_per_sm, threads_per_block, amd.waves_per_simd, occupancy * 100,
                     occupancy_limiter.empty() ? "?" : occupancy_limiter);
    s += fmt::format("MFMA          {}\n", amd.mfma);
    if (sass_available) {
      std::string mix;
      for (const auto& [op, n] : instruction_mix) mix += fmt::format(" {}={}", op, n);
      s += "instructions " + mix + "\n";
    } else {
      s += "ISA           unavailable: " + sass_note + "\n";
    }
    for (const auto& n : notes) s += "note          " + n + "\n";
    return s;
  }
  s += fmt::format("registers     {} (CUBIN {})\n", opt(registers), opt(elf_registers));
  s += fmt::format("static smem   {} B (CUBIN {} B), dynamic {} B\n", opt(static_smem_bytes),
                   opt(elf_static_smem_bytes), dynamic_smem_bytes);
  s += fmt::format("stack frame   {} B (CUBIN {} B), spills {} B stored / {} B loaded\n",
                   opt(stack_frame_bytes), opt(elf_stack_frame_bytes), opt(spill_store_bytes),
                   opt(spill_load_bytes));
  s += fmt::format("barriers      {}, cmem[0] {} B\n", opt(barriers), opt(cmem0_bytes));
  s += fmt::format("log vs CUBIN  {}\n", consistent ? "consistent" : "DIFFERENT");
  s += fmt::format("occupancy     {} blocks/SM x {} threads = {:.0f}% (limited by {})\n", blocks_per_sm,
                   threads_per_block, occupancy * 100, occupancy_limiter.empty() ? "?" : occupancy_limiter);
  if (sass_available) {
    std::string mix;
    for (const auto& [op, n] : instruction_mix) mix += fmt::format(" {}={}", op, n);
    s += "instructions " + mix + "\n";
  } else {
    s += "SASS          unavailable: " + sass_note + "\n";
  }
  for (const auto& n : notes) s += "note          " + n + "\n";
  return s;
}

}  // namespace i8g
