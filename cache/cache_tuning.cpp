// Tuning results: every candidate's timing (appended, never replaced) and one winner per exact
// TuneKey (replaced by a re-tune). Also the explicit removal of stale entries.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "cache/cache_impl.hpp"
#include "core/error.hpp"

namespace i8g::cache {
namespace {

constexpr const char* kKeyColumns =
    "problem_key, m_bucket, arch, sm_count, gpu_name, compiler_version, driver_version, generator_hash";
constexpr const char* kKeyMatch =
    "problem_key=? AND m_bucket=? AND arch=? AND sm_count=? AND gpu_name=? AND compiler_version=? "
    "AND driver_version=? AND generator_hash=?";
constexpr int kKeyParams = 8;

void bind_key(sql::Stmt& s, int first, const TuneKey& k) {
  s.bind(first, k.problem_key).bind(first + 1, k.m_bucket).bind(first + 2, k.arch);
  s.bind(first + 3, k.sm_count).bind(first + 4, k.gpu_name).bind(first + 5, k.compiler_version);
  s.bind(first + 6, k.driver_version).bind(first + 7, k.generator_hash);
}

TuneKey read_key(const sql::Stmt& s, int first) {
  TuneKey k;
  k.problem_key = s.text(first);
  k.m_bucket = s.i64(first + 1);
  k.arch = s.text(first + 2);
  k.sm_count = int(s.i64(first + 3));
  k.gpu_name = s.text(first + 4);
  k.compiler_version = s.text(first + 5);
  k.driver_version = s.text(first + 6);
  k.generator_hash = s.text(first + 7);
  return k;
}

// SQLite turns NaN into NULL; keep that explicit both ways (NULL = not measured).
void bind_real(sql::Stmt& s, int i, double v) {
  if (std::isnan(v)) s.bind_null(i);
  else s.bind(i, v);
}

void bind_real(sql::Stmt& s, int i, const std::optional<double>& v) {
  if (v) bind_real(s, i, *v);
  else s.bind_null(i);
}

double read_real(const sql::Stmt& s, int col) {
  return s.is_null(col) ? std::numeric_limits<double>::quiet_NaN() : s.f64(col);
}

std::optional<double> read_measured(const sql::Stmt& s, int col) {
  if (s.is_null(col)) return std::nullopt;
  return s.f64(col);
}

std::string timing_select(const char* where) {
  return std::string("SELECT ") + kKeyColumns +
         ", candidate, kernel_id, status, reason, eager_median_us, eager_p90_us, eager_min_us, "
         "graph_median_us, graph_p90_us, graph_min_us, created_at FROM timings WHERE " +
         where + " ORDER BY created_at, id";
}

Timing read_timing(const sql::Stmt& s) {
  Timing t;
  t.key = read_key(s, 0);
  int c = kKeyParams;
  t.candidate = s.text(c++);
  t.kernel_id = s.i64(c++);
  const std::string status = s.text(c++);
  const std::optional<CandidateStatus> parsed = parse_candidate_status(status);
  // The schema's CHECK keeps other text out; a row that has it anyway was not written by us.
  if (!parsed)
    throw Error(ErrorKind::cache, "i8g::cache::Cache::timings",
                "timing of " + t.candidate + ": status '" + status + "' is not ok/rejected/failed");
  t.status = *parsed;
  t.reason = s.text(c++);
  t.eager_median_us = read_measured(s, c++);
  t.eager_p90_us = read_measured(s, c++);
  t.eager_min_us = read_measured(s, c++);
  t.graph_median_us = read_measured(s, c++);
  t.graph_p90_us = read_measured(s, c++);
  t.graph_min_us = read_measured(s, c++);
  t.created_at = s.i64(c++);
  return t;
}

std::string winner_select(const char* where) {
  return std::string("SELECT ") + kKeyColumns +
         ", candidate, kernel_id, time_us, baseline_us, speedup, created_at FROM winners " + where;
}

Winner read_winner(const sql::Stmt& s) {
  Winner w;
  w.key = read_key(s, 0);
  int c = kKeyParams;
  w.candidate = s.text(c++);
  w.kernel_id = s.i64(c++);
  w.time_us = read_real(s, c++);
  w.baseline_us = read_real(s, c++);
  w.speedup = read_real(s, c++);
  w.created_at = s.i64(c++);
  return w;
}

}  // namespace

const char* to_string(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::ok: return "ok";
    case CandidateStatus::rejected: return "rejected";
    case CandidateStatus::failed: return "failed";
  }
  return "";
}

std::optional<CandidateStatus> parse_candidate_status(const std::string& text) {
  for (CandidateStatus s : {CandidateStatus::ok, CandidateStatus::rejected, CandidateStatus::failed})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

void Cache::put_timings(const std::vector<Timing>& ts) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  require_writable(impl_->mode, impl_->path, "i8g::cache::Cache::put_timings");
  for (const Timing& t : ts)
    if (std::string(to_string(t.status)).empty())  // only a cast makes another value
      throw Error(ErrorKind::cache, "i8g::cache::Cache::put_timings",
                  "timing of " + t.candidate + ": status " + std::to_string(int(t.status)) +
                      " is not ok/rejected/failed");
  if (ts.empty()) return;
  int64_t now = now_unix();
  sql::Db& db = *impl_->db;
  sql::WriteTxn txn(db);
  sql::Stmt s(db, (std::string("INSERT INTO timings (") + kKeyColumns +
                   ", candidate, kernel_id, status, reason, eager_median_us, eager_p90_us, "
                   "eager_min_us, graph_median_us, graph_p90_us, graph_min_us, created_at) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
                      .c_str());
  for (const Timing& t : ts) {
    bind_key(s, 1, t.key);
    int i = kKeyParams + 1;
    s.bind(i, t.candidate).bind(i + 1, t.kernel_id).bind(i + 2, std::string(to_string(t.status)));
    s.bind(i + 3, t.reason);
    i += 4;
    for (const std::optional<double>* v : {&t.eager_median_us, &t.eager_p90_us, &t.eager_min_us,
                                           &t.graph_median_us, &t.graph_p90_us, &t.graph_min_us})
      bind_real(s, i++, *v);
    s.bind(i++, t.created_at ? t.created_at : now);
    s.run();
    s.reset();
  }
  txn.commit();
}

std::vector<Timing> Cache::timings(const TuneKey& key) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, timing_select(kKeyMatch).c_str());
  bind_key(s, 1, key);
  std::vector<Timing> out;
  while (s.step()) out.push_back(read_timing(s));
  return out;
}

std::vector<Timing> Cache::timings_for_kernel(int64_t kernel_id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, timing_select("kernel_id=?").c_str());
  s.bind(1, kernel_id);
  std::vector<Timing> out;
  while (s.step()) out.push_back(read_timing(s));
  return out;
}

std::vector<Timing> Cache::all_timings() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, timing_select("1").c_str());
  std::vector<Timing> out;
  while (s.step()) out.push_back(read_timing(s));
  return out;
}

void Cache::put_winner(const Winner& w) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  require_writable(impl_->mode, impl_->path, "i8g::cache::Cache::put_winner");
  sql::Db& db = *impl_->db;
  sql::WriteTxn txn(db);
  sql::Stmt s(db, (std::string("INSERT INTO winners (") + kKeyColumns +
                   ", candidate, kernel_id, time_us, baseline_us, speedup, created_at) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (" + kKeyColumns +
                   ") DO UPDATE SET candidate=excluded.candidate, kernel_id=excluded.kernel_id, "
                   "time_us=excluded.time_us, baseline_us=excluded.baseline_us, "
                   "speedup=excluded.speedup, created_at=excluded.created_at")
                      .c_str());
  bind_key(s, 1, w.key);
  int i = kKeyParams + 1;
  s.bind(i, w.candidate).bind(i + 1, w.kernel_id);
  i += 2;
  bind_real(s, i++, w.time_us);
  bind_real(s, i++, w.baseline_us);
  bind_real(s, i++, w.speedup);
  s.bind(i++, w.created_at ? w.created_at : now_unix());
  s.run();
  txn.commit();
}

std::optional<Winner> Cache::get_winner(const TuneKey& key) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, winner_select((std::string("WHERE ") + kKeyMatch).c_str()).c_str());
  bind_key(s, 1, key);
  if (!s.step()) return std::nullopt;
  return read_winner(s);
}

std::vector<Winner> Cache::list_winners() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, winner_select((std::string("ORDER BY ") + kKeyColumns).c_str()).c_str());
  std::vector<Winner> out;
  while (s.step()) out.push_back(read_winner(s));
  return out;
}

int64_t Cache::remove_stale(const std::string& compiler_version, const std::string& generator_hash) {
  return remove_stale(Current{compiler_version, generator_hash, "", ""});
}

namespace {

// Which rows are stale, per table. ?1 current compiler, ?2 generator hash, ?3 driver, ?4 GPU
// (empty: not a criterion), ?5 a JSON array of further current compilers, ?6 (kernels only) a
// JSON object arch -> current options hash ('{}': not a criterion). Values are bound, never
// spliced into the text.
constexpr const char* kStaleKernels =
    "FROM kernels WHERE generator_hash<>?2 OR (compiler_version<>?1 AND "
    "compiler_version NOT IN (SELECT value FROM json_each(?5))) OR (?6<>'{}' AND options_hash IS NOT "
    "(SELECT value FROM json_each(?6) WHERE key = kernels.arch))";
constexpr const char* kStaleTimings =
    "FROM timings WHERE generator_hash<>?2 OR (compiler_version<>?1 AND "
    "compiler_version NOT IN (SELECT value FROM json_each(?5))) "
    "OR (?3<>'' AND driver_version<>?3) OR (?4<>'' AND gpu_name<>?4)";
constexpr const char* kStaleWinners =
    "FROM winners WHERE generator_hash<>?2 OR (compiler_version<>?1 AND "
    "compiler_version NOT IN (SELECT value FROM json_each(?5))) "
    "OR (?3<>'' AND driver_version<>?3) OR (?4<>'' AND gpu_name<>?4)";

void require_current(const Current& c, const char* where) {
  // An empty current value would match nothing and wipe the whole cache: refuse it.
  if (c.compiler_version.empty() || c.generator_hash.empty())
    throw Error(ErrorKind::cache, where, "needs the current compiler version and generator hash");
}

// Runs `verb` (DELETE or SELECT count(*)) over each table's stale rows.
StaleCounts over_stale(sql::Db& db, const Current& c, bool remove) {
  StaleCounts n;
  const std::string others = nlohmann::json(c.other_compiler_versions).dump();
  for (auto [where, out] : {std::pair{kStaleKernels, &n.kernels}, std::pair{kStaleTimings, &n.timings},
                            std::pair{kStaleWinners, &n.winners}}) {
    const std::string text = (remove ? "DELETE " : "SELECT count(*) ") + std::string(where);
    sql::Stmt s(db, text.c_str());
    s.bind(1, c.compiler_version).bind(2, c.generator_hash).bind(3, c.driver_version).bind(4, c.gpu_name);
    s.bind(5, others);
    if (where == kStaleKernels) s.bind(6, nlohmann::json(c.options_hash_by_arch).dump());
    if (remove) {
      s.run();
      *out = db.changes();
    } else {
      *out = s.step() ? s.i64(0) : 0;
    }
  }
  return n;
}

}  // namespace

int64_t Cache::remove_stale(const Current& c, StaleCounts* counts) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  require_writable(impl_->mode, impl_->path, "i8g::cache::Cache::remove_stale");
  require_current(c, "i8g::cache::Cache::remove_stale");
  sql::Db& db = *impl_->db;
  sql::WriteTxn txn(db);
  const StaleCounts n = over_stale(db, c, true);
  txn.commit();
  if (counts) *counts = n;
  return n.total();
}

StaleCounts Cache::count_stale(const Current& c) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  require_current(c, "i8g::cache::Cache::count_stale");
  return over_stale(*impl_->db, c, false);
}

}  // namespace i8g::cache
