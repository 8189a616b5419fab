#include "runtime/report/amd_ir.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/report/report.hpp"

namespace i8g {
namespace {

constexpr int kPrivateAddrspace = 5;

std::string read_string(const nlohmann::json& j, const char* key) {
  std::string s;
  read_json_field(j, key, s);
  return s;
}

int64_t read_int64(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer()) throw Error("IR facts", std::string(key) + " is not an integer");
  return v.get<int64_t>();
}

}  // namespace

std::vector<AmdIrKernel> parse_amd_ir_facts(const std::string& json) {
  try {
    const nlohmann::json doc = nlohmann::json::parse(json);
    std::vector<AmdIrKernel> out;
    for (const nlohmann::json& k : doc.at("kernels")) {
      AmdIrKernel x;
      x.name = read_string(k, "name");
      read_json_field(k, "mfma", x.mfma);
      x.lds_bytes = read_int64(k, "lds_bytes");
      for (const nlohmann::json& a : k.at("allocas"))
        x.allocas.push_back({read_string(a, "function"), read_string(a, "type"), read_int64(a, "bytes"),
                             int(read_int64(a, "addrspace"))});
      for (const nlohmann::json& c : k.at("calls"))
        x.calls.push_back({read_string(c, "function"), read_string(c, "callee"), read_string(c, "kind")});
      out.push_back(std::move(x));
    }
    return out;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("IR facts", std::string("malformed answer of the IR reader: ") + e.what());
  }
}

std::vector<AmdIrFinding> judge_amd_ir(const std::vector<AmdIrKernel>& kernels, const AmdIrExpectations& e) {
  std::vector<AmdIrFinding> out;
  bool found = false;
  for (const AmdIrKernel& k : kernels) {
    const bool mine = k.name == e.symbol;
    found |= mine;
    for (const AmdIrKernel::Alloca& a : k.allocas)
      out.push_back({a.addrspace == kPrivateAddrspace ? "reject" : "warning", k.name,
                     fmt::format("IR: private memory survives: alloca {} ({} B, addrspace {}) in {}; it becomes scratch",
                                 a.type, a.bytes, a.addrspace, a.function)});
    for (const AmdIrKernel::Call& c : k.calls)
      if (c.kind != "external")
        out.push_back({"warning", k.name,
                       c.kind == "indirect" ? fmt::format("IR: an indirect call in {}", c.function)
                                            : fmt::format("IR: call to {} not inlined (in {})", c.callee, c.function)});
    if (!mine) continue;
    if (e.config_mfma > 0) {
      // One copy of the K step's body, or several where (part of) the K loop was unrolled.
      const int64_t copies = k.mfma / e.config_mfma;
      const bool whole = k.mfma % e.config_mfma == 0 && copies >= 1 && (e.k_steps < 1 || copies <= e.k_steps);
      if (!whole)
        out.push_back({"reject", k.name,
                       e.k_steps > 1 ? fmt::format("IR: {} MFMA intrinsics, the config implies {} per K step ({} steps)",
                                                   k.mfma, e.config_mfma, e.k_steps)
                                     : fmt::format("IR: {} MFMA intrinsics, the config implies {}", k.mfma, e.config_mfma)});
    }
    if (e.isa_mfma >= 0 && k.mfma != e.isa_mfma)
      out.push_back({"warning", k.name, fmt::format("IR: {} MFMA intrinsics, the ISA has {} v_mfma", k.mfma, e.isa_mfma)});
    if (e.lds_bytes >= 0 && k.lds_bytes != e.lds_bytes)
      out.push_back({"warning", k.name,
                     fmt::format("IR: {} B of LDS globals (addrspace 3), the report says {} B", k.lds_bytes, e.lds_bytes)});
  }
  if (!found) out.push_back({"error", e.symbol, "IR: the kernel is not defined in its stored IR"});
  return out;
}

std::vector<AmdIrFinding> audit_amd_ir(const std::string& ir, const AmdIrExpectations& e) {
  if (ir.empty()) return {{"info", e.symbol, "no LLVM IR stored (made before IR was kept, or its compile log says why)"}};
  try {
    return judge_amd_ir(parse_amd_ir_facts(amd_ir_facts(ir)), e);
  } catch (const std::exception& x) {
    return {{"error", e.symbol, std::string("IR unreadable: ") + x.what()}};
  }
}

}  // namespace i8g
