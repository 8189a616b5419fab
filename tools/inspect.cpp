// i8gemm inspect: list, show and audit cache entries (ISA, registers, spills, occupancy).
// Opens the cache read-only and loads nothing onto a GPU: safe on an untrusted file.
// AMD entries (gfx*) are compiled and audited only: no AMD GPU runs them here.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <tuple>

#include "cache/cache.hpp"
#include "core/embedded.hpp"
#include "core/error.hpp"
#include "generator/types.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"
#include "tools/cli.hpp"
#include "tools/inspect_amd.hpp"

namespace i8g::cli {
namespace {

struct InspectOptions : InspectShared {
  std::string name;
  bool ir = false;  // show: the IR alone (PTX, or LLVM IR for AMD entries)
};

constexpr const char* kAmdNotice =
    "AMD entries are compiled and audited only, not executed: no AMD GPU is available here";

bool is_amd(const cache::StoredKernel& k) { return k.key.arch.rfind("gfx", 0) == 0; }

// A row's resource report, or why it has none: rows are untrusted, and rows of older builds may
// hold an empty report (the utility module's, before it had one).
std::optional<ResourceReport> report_of(const cache::StoredKernel& k, std::string* why) {
  if (k.report_json.empty()) {
    *why = "no resource report recorded";
    return std::nullopt;
  }
  try {
    return ResourceReport::from_json(nlohmann::json::parse(k.report_json));
  } catch (const std::exception& e) {
    *why = std::string("malformed resource report: ") + e.what();
    return std::nullopt;
  }
}

AmdResources amd_of(const cache::StoredKernel& k) {
  if (k.report_json.empty()) return {};
  try {
    return ResourceReport::from_json(nlohmann::json::parse(k.report_json)).amd;
  } catch (const std::exception&) {
    return {};
  }
}

nlohmann::json summary_json(const cache::StoredKernel& k, CurrentBuild& build) {
  const std::string why = build.stale_reason(k);
  return {{"id", k.id}, {"name", k.key.name}, {"arch", k.key.arch},
          {"compiler", k.key.compiler_version}, {"generator_hash", k.key.generator_hash},
          {"options_hash", k.key.options_hash}, {"family", k.family}, {"problem", k.problem_key},
          {"config", k.config}, {"registers", k.registers}, {"smem_bytes", k.smem_bytes},
          {"stack_bytes", k.stack_bytes}, {"spill_bytes", k.spill_bytes}, {"occupancy", k.occupancy},
          {"binary_bytes", k.binary_size}, {"status", build.status(k)},
          {"generated", !cache::is_override(k.key.generator_hash)},
          {"stale", cache::is_override(k.key.generator_hash) || !why.empty()}, {"stale_reason", why}};
}

nlohmann::json summary_json(const cache::StoredKernel& k, CurrentBuild& build, const AmdResources& a) {
  nlohmann::json j = summary_json(k, build);
  if (a.present) {
    j["amd"] = a.to_json();
    j["executed"] = false;  // compiled and audited only
  }
  return j;
}

std::vector<cache::StoredKernel> select(cache::Cache& c, const std::string& filter, bool blobs) {
  try {
    return c.list_kernels({filter, blobs});
  } catch (const std::regex_error& e) {
    throw Error("--filter", fmt::format("'{}' is not a regular expression", filter));
  }
}

void run_list(const InspectOptions& o) {
  cache::Cache c(resolve_cache_path(o.cache), cache::Cache::Mode::read_only);
  CurrentBuild build;
  const auto ks = select(c, o.filter, false);
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& k : ks) arr.push_back(summary_json(k, build, amd_of(k)));
    nlohmann::json doc = json_document("inspect-list");
    doc["kernels"] = std::move(arr);
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
    return;
  }
  const size_t amd = size_t(std::count_if(ks.begin(), ks.end(), is_amd));
  const bool header = amd < ks.size() || ks.empty();
  if (header)
    print_safe("{:<100} {:<7} {:>4} {:>7} {:>6} {:>6} {:>5} {:>8}\n", "name", "arch", "regs", "smem",
               "stack", "spills", "occ", "status");
  for (const auto& k : ks) {
    if (is_amd(k)) continue;
    print_safe("{:<100} {:<7} {:>4} {:>7} {:>6} {:>6} {:>4.0f}% {:>8}\n", k.key.name, k.key.arch,
               k.registers, k.smem_bytes, k.stack_bytes, k.spill_bytes, 100 * k.occupancy, build.status(k));
  }
  if (amd > 0) {
    if (header) print_safe("\n");
    print_safe("{:<100} {:<7} {:>4} {:>4} {:>4} {:>6} {:>7} {:>6} {:>4} {:>5} {:>8}\n", "name", "arch", "vgpr",
               "agpr", "sgpr", "lds", "scratch", "spills", "mfma", "occ", "status");
    for (const auto& k : ks) {
      if (!is_amd(k)) continue;
      const AmdResources a = amd_of(k);
      print_safe("{:<100} {:<7} {:>4} {:>4} {:>4} {:>6} {:>7} {:>6} {:>4} {:>4.0f}% {:>8}\n", k.key.name,
                 k.key.arch, a.vgprs, a.agprs, a.sgprs, a.lds_bytes, a.scratch_bytes,
                 std::max(a.vgpr_spills, 0) + std::max(a.sgpr_spills, 0), a.mfma, 100 * k.occupancy,
                 build.status(k));
    }
    print_safe("{}; spills are spilled registers, occupancy is waves per SIMD.\n", kAmdNotice);
  }
  const size_t overrides = size_t(std::count_if(ks.begin(), ks.end(), [](const cache::StoredKernel& k) {
    return cache::is_override(k.key.generator_hash);
  }));
  if (overrides > 0)
    print_safe("{} entries are source overrides (I8GEMM_SOURCE_OVERRIDE_DIR), not generated kernels\n", overrides);
  print_safe("{} kernels in {}\n", ks.size(), c.path());
}

// The entry of `name` this build would use; else a source override; else the newest.
std::optional<cache::StoredKernel> pick_entry(cache::Cache& c, const std::string& name, CurrentBuild& build,
                                              std::vector<cache::StoredKernel>* all) {
  std::vector<cache::StoredKernel> matches;
  for (auto& k : c.list_kernels({})) if (k.key.name == name) matches.push_back(k);
  if (matches.empty()) return std::nullopt;
  const cache::StoredKernel* pick = &matches.back();
  for (const auto& k : matches) if (build.status(k) == "override" && build.stale_reason(k).empty()) pick = &k;
  for (const auto& k : matches) if (build.status(k) == "ok") pick = &k;
  auto full = c.get_kernel(pick->id);
  if (!full) throw Error("inspect show", "the entry vanished while reading");
  if (all) *all = std::move(matches);
  return full;
}

std::string status_line(const cache::StoredKernel& k, CurrentBuild& build) {
  const std::string why = build.stale_reason(k);
  if (cache::is_override(k.key.generator_hash))
    return "override: compiled from a source override (I8GEMM_SOURCE_OVERRIDE_DIR), not generated; never served "
           "as the generated kernel" + (why.empty() ? std::string() : "; stale: " + why);
  return why.empty() ? "ok" : "stale: " + why;
}

// The SASS of an NVIDIA entry stored without it (prepare spawns no nvdisasm): disassembled now,
// into `rep` too when the row has a report; never stored (inspect does not write the cache). A
// damaged binary is not handed to nvdisasm.
std::string sass_on_demand(const cache::StoredKernel& k, std::optional<ResourceReport>& rep) {
  if (is_amd(k) || !k.damage.empty() || k.binary.empty()) return "";
  ResourceReport bare;
  bare.symbol = k.lowered_name;
  ResourceReport& r = rep ? *rep : bare;
  add_sass(r, k.binary);
  if (r.sass_available) r.notes.push_back("SASS disassembled by this inspect (the entry was stored without it)");
  return r.sass;
}

const char* ir_kind(const cache::StoredKernel& k) { return is_amd(k) ? "LLVM IR" : "PTX"; }

// `show NAME --ir`: the IR alone, for a reader or a pipe into llvm-as / ptxas.
void show_ir(const cache::StoredKernel& k, bool json) {
  if (k.ir.empty())
    throw Error("inspect show --ir",
                fmt::format("{} has no {} stored (an entry made before IR was kept, or its compile log says why)",
                            k.key.name, ir_kind(k)));
  if (json) {
    nlohmann::json doc = json_document("inspect-show-ir");
    doc.update(nlohmann::json{{"name", k.key.name}, {"arch", k.key.arch}, {"ir_kind", is_amd(k) ? "llvm" : "ptx"},
                              {"ir", k.ir}});
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
  } else {
    print_safe("{}", k.ir);
  }
}

void run_show(const InspectOptions& o) {
  cache::Cache c(resolve_cache_path(o.cache), cache::Cache::Mode::read_only);
  CurrentBuild build;
  std::vector<cache::StoredKernel> all;
  const auto full = pick_entry(c, o.name, build, &all);
  if (!full) throw Error("inspect show", fmt::format("no kernel named '{}' in {}", o.name, c.path()));
  const cache::StoredKernel& k = *full;
  if (o.ir) return show_ir(k, o.json);
  std::string no_report;
  std::optional<ResourceReport> rep = report_of(k, &no_report);
  const std::string isa = k.isa.empty() ? sass_on_demand(k, rep) : k.isa;
  if (o.json) {
    nlohmann::json j = summary_json(k, build, rep ? rep->amd : AmdResources{});
    j["report"] = rep ? rep->to_json() : nlohmann::json(nullptr);
    if (!rep) j["report_note"] = no_report;
    j["options"] = k.options;
    j["source"] = k.source;
    j["entry"] = k.entry;
    j["lowered_name"] = k.lowered_name;
    j["ptx"] = is_amd(k) ? "" : k.ir;
    j["llvm_ir"] = is_amd(k) ? k.ir : "";
    j["sass"] = isa;
    j["log"] = k.log;
    j["binary_sha256"] = k.binary_sha256;
    nlohmann::json doc = json_document("inspect-show");
    doc.update(j);
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
    return;
  }
  print_safe("name      {}\narch      {}\ncompiler  {}\ngenerator {}\noptions#  {}\nfamily    {}\nproblem   {}\n"
             "config    {}\nentry     {}\nsymbol    {}\noptions   {}\nbinary    {} bytes, sha256 {}\nstatus    {}\n",
             k.key.name, k.key.arch, k.key.compiler_version, k.key.generator_hash,
             k.key.options_hash.empty() ? "(none: schema 1)" : k.key.options_hash, k.family, k.problem_key,
             k.config, k.entry, k.lowered_name, fmt::join(k.options, " "), k.binary.size(), k.binary_sha256,
             status_line(k, build));
  for (const auto& other : all)
    if (other.id != k.id) print_safe("also      id {} ({}); not shown\n", other.id, status_line(other, build));
  print_safe("\n");
  if (is_amd(k)) print_safe("{}.\n\n", kAmdNotice);
  print_safe("== report ==\n{}\n", rep ? rep->to_text() : no_report + "\n");
  const std::vector<cache::Timing> ts = c.timings_for_kernel(k.id);
  if (!ts.empty()) {
    print_safe("== timings ==\n{:>6} {:<14} {:<9} {:>10} {:>10} {:>10} {:>10}  {}\n", "M", "gpu", "status",
               "graph med", "graph p90", "eager med", "eager p90", "note");
    for (const auto& t : ts)
      print_safe("{:>6} {:<14} {:<9} {:>10} {:>10} {:>10} {:>10}  {}\n", t.key.m_bucket,
                 t.key.gpu_name.substr(0, 14), to_string(t.status), us_or_dash(t.graph_median_us),
                 us_or_dash(t.graph_p90_us), us_or_dash(t.eager_median_us), us_or_dash(t.eager_p90_us),
                 t.reason.substr(0, 80));
    print_safe("\n");
  }
  print_safe("== source ==\n{}\n", k.source);
  print_safe("== compiler log ==\n{}\n", k.log);
  print_safe("== {} ==\n{}\n", ir_kind(k), k.ir.empty() ? "none stored" : k.ir);
  const char* isa_title = is_amd(k) ? "AMDGPU ISA (comgr disassembly of the kernel symbol)" : "SASS";
  if (isa.empty())
    print_safe("== {} ==\nunavailable: {}\n", isa_title,
               rep && !rep->sass_note.empty() ? rep->sass_note : "not recorded");
  else
    print_safe("== {} ==\n{}\n", isa_title, isa);
}

void run_winners(const InspectOptions& o) {
  cache::Cache c(resolve_cache_path(o.cache), cache::Cache::Mode::read_only);
  CurrentBuild build;
  // Like kernels: a winner tuned with another compiler or template version is never looked up.
  auto stale = [&](const cache::Winner& w) {
    return w.key.generator_hash != generator_hash() || w.key.compiler_version != build.compiler_version(w.key.arch);
  };
  const std::vector<cache::Winner> ws = winners_in_order(c);
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& w : ws)
      arr.push_back({{"problem", w.key.problem_key}, {"m_bucket", w.key.m_bucket}, {"gpu", w.key.gpu_name},
                     {"arch", w.key.arch}, {"sm_count", w.key.sm_count}, {"driver", w.key.driver_version},
                     {"compiler", w.key.compiler_version}, {"winner", w.candidate}, {"time_us", w.time_us},
                     {"cublaslt_us", w.baseline_us}, {"speedup", w.speedup}, {"stale", stale(w)},
                     {"candidates_timed", c.timings(w.key).size()}});
    nlohmann::json doc = json_document("inspect-winners");
    doc["winners"] = std::move(arr);
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
    return;
  }
  print_safe("{:<32} {:>6} {:<14} {:>9} {:>9} {:>8} {:>6}  {}\n", "problem", "M", "gpu", "time us", "cuBLASLt",
             "speedup", "timed", "winner");
  for (const auto& w : ws)
    print_safe("{:<32} {:>6} {:<14} {:>9} {:>9} {:>8} {:>6}  {}\n", w.key.problem_key, w.key.m_bucket,
               w.key.gpu_name.substr(0, 14), us_or_dash(w.time_us),
               w.baseline_us > 0 ? fmt::format("{:.2f}", w.baseline_us) : "n/a",
               w.speedup > 0 ? fmt::format("{:.2f}x", w.speedup) : "n/a", c.timings(w.key).size(),
               w.candidate + (stale(w) ? " (stale)" : ""));
  print_safe("{} tuned buckets in {}\n", ws.size(), c.path());
}

void audit_nvidia(const cache::StoredKernel& k, const ResourceReport& rep, std::vector<Finding>& out) {
  if (k.spill_bytes > 0) out.push_back({"warning", k.key.name, fmt::format("spills {} bytes", k.spill_bytes)});
  if (k.stack_bytes > 0) out.push_back({"warning", k.key.name, fmt::format("uses {} bytes of local memory (stack frame)", k.stack_bytes)});
  if (k.registers >= 255) out.push_back({"warning", k.key.name, "at the register limit (255)"});
  if (k.registers < 0 || k.smem_bytes < 0) out.push_back({"warning", k.key.name, "resource report incomplete"});
  if (!rep.consistent) out.push_back({"warning", k.key.name, "ptxas log and CUBIN disagree: " + fmt::format("{}", fmt::join(rep.notes, "; "))});
  // No finding is not a clean bill when the SASS was never looked at (prepare stores none).
  if (!rep.sass_available)
    out.push_back({"info", k.key.name, rep.sass_note.rfind("not disassembled", 0) == 0
                                           ? rep.sass_note
                                           : "not disassembled: " + (rep.sass_note.empty() ? "no SASS recorded" : rep.sass_note)});
  if (rep.occupancy > 0 && rep.occupancy < 0.25)
    out.push_back({"warning", k.key.name, fmt::format("occupancy {:.0f}% (limited by {})", 100 * rep.occupancy, rep.occupancy_limiter)});
}

// One row; a row that cannot be judged is named and the audit goes on (its error fails the run).
void audit_kernel(cache::Cache& c, const cache::StoredKernel& k, CurrentBuild& build, std::vector<Finding>& out) {
  const std::string stale = build.stale_reason(k);
  if (!k.damage.empty()) out.push_back({"error", k.key.name, k.damage});
  std::string why;
  const std::optional<ResourceReport> rep = report_of(k, &why);
  if (rep) {
    if (is_amd(k)) audit_amd(k, *rep, out);
    else audit_nvidia(k, *rep, out);
  } else if (stale.empty() || !k.report_json.empty()) {
    // (A stale row without a report is one an older build stored: unreachable, nothing to judge.)
    out.push_back({is_amd(k) ? "reject" : "error", k.key.name, fmt::format("id {}: {}", k.id, why)});
  }
  if (is_amd(k) && k.damage.empty()) audit_amd_ir(c, k, rep ? &*rep : nullptr, out);
  if (cache::is_override(k.key.generator_hash))
    out.push_back({"info", k.key.name, "source override (I8GEMM_SOURCE_OVERRIDE_DIR): not generated; reached only "
                                       "while that override is set, never as the generated kernel"});
  if (!stale.empty()) out.push_back({"info", k.key.name, "stale: " + stale + "; lookups skip it"});
}

void run_audit(const InspectOptions& o) {
  cache::Cache c(resolve_cache_path(o.cache), cache::Cache::Mode::read_only);
  CurrentBuild build;
  std::vector<Finding> findings;
  const cache::Cache::Audit a = c.audit();
  if (a.integrity != "ok") findings.push_back({"error", "(database)", "integrity check: " + a.integrity});
  const auto ks = select(c, o.filter, false);
  for (int64_t id : a.hash_mismatch) {
    std::string name = fmt::format("id {}", id);
    for (const auto& k : ks) if (k.id == id) name = k.key.name;
    findings.push_back({"error", name, "stored binary does not match its sha256: it will never be loaded"});
  }
  for (int64_t id : a.not_device_code) {
    std::string name = fmt::format("id {}", id);
    for (const auto& k : ks) if (k.id == id) name = k.key.name;
    findings.push_back({"error", name, "stored binary is not GPU device code: it will never be loaded"});
  }
  size_t amd = 0;
  for (const auto& k : ks) {
    amd += is_amd(k);
    audit_kernel(c, k, build, findings);
  }
  int errors = 0;
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& f : findings) arr.push_back({{"severity", f.severity}, {"name", f.name}, {"finding", f.what}});
    nlohmann::json doc = json_document("inspect-audit");
    doc.update(nlohmann::json{{"kernels", ks.size()}, {"integrity", a.integrity}, {"findings", arr}});
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
  } else {
    for (const auto& f : findings) print_safe("{:<8} {}: {}\n", f.severity, f.name, f.what);
  }
  for (const auto& f : findings) errors += f.severity == "error" || f.severity == "reject";
  if (!o.json && amd > 0) print_safe("{} ({} AMD entries).\n", kAmdNotice, amd);
  if (!o.json)
    print_safe("audited {} kernels in {}: integrity {}, {} hash mismatches, {} findings\n", ks.size(),
               c.path(), a.integrity, a.hash_mismatch.size(), findings.size());
  if (errors > 0) throw CLI::RuntimeError(1);
}

}  // namespace

void setup_inspect(CLI::App& app) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "list, show and audit cache entries (read-only); dump a kernel's source");
  add_cache_option(*cmd, opts->cache, "cache file (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  cmd->add_option("--filter", opts->filter, "only kernels whose name matches this regex");
  cmd->add_flag("--json", opts->json, "print JSON");
  cmd->require_subcommand(0, 1);
  CLI::App* list = cmd->add_subcommand("list", "a table of entries: registers, smem, spills, occupancy (default)");
  CLI::App* show = cmd->add_subcommand("show", "one entry: config, report, source, IR (PTX or LLVM IR) and ISA");
  show->add_option("name", opts->name, "kernel name")->required();
  show->add_flag("--ir", opts->ir, "print only the IR: PTX for NVIDIA entries, LLVM IR for AMD ones");
  CLI::App* audit = cmd->add_subcommand("audit", "flag spills, local memory, register/occupancy limits, hash mismatches; AMD: IR-level findings");
  CLI::App* winners = cmd->add_subcommand("winners", "tuned winners per problem and M bucket, with times and speedups over cuBLASLt");
  for (CLI::App* sub : {list, show, audit, winners}) {
    add_cache_option(*sub, opts->cache, "cache file");
    sub->add_option("--filter", opts->filter, "only kernels whose name matches this regex");
    sub->add_flag("--json", opts->json, "print JSON");
  }
  setup_inspect_source(*cmd, opts);
  setup_inspect_race(*cmd, opts);
  list->callback([opts] { run_list(*opts); });
  show->callback([opts] { run_show(*opts); });
  audit->callback([opts] { run_audit(*opts); });
  winners->callback([opts] { run_winners(*opts); });
  cmd->callback([cmd, opts] {
    if (cmd->get_subcommands().empty()) run_list(*opts);
  });
}

}  // namespace i8g::cli
