// Compiled kernels: content-hashed binaries stored beside everything needed to re-create or
// inspect them. Stored entries are never overwritten; the audit re-hashes them.
#include <openssl/evp.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "cache/cache_impl.hpp"
#include "core/error.hpp"

namespace i8g::cache {
namespace {

// Column order follows the table (big columns last); kBlobColumns continues kListColumns.
constexpr const char* kListColumns =
    "id, name, arch, compiler_version, generator_hash, options_hash, family, problem_key, config, n, k, entry, "
    "lowered_name, options, binary_size, binary_sha256, registers, stack_bytes, spill_bytes, "
    "smem_bytes, occupancy, compile_ms, created_at, report_json";
constexpr const char* kBlobColumns = ", source, ir, log, isa, binary";

std::string select_sql(bool with_blobs, const char* where) {
  return std::string("SELECT ") + kListColumns + (with_blobs ? kBlobColumns : "") + " FROM kernels " +
         where;
}

// A row whose options do not parse throws, or (listing: `damage` not null) is kept with the
// reason in *damage, so that a listing or an audit can name it and go on.
std::vector<std::string> parse_options(const std::string& text, int64_t id, std::string* damage) {
  try {
    return nlohmann::json::parse(text).get<std::vector<std::string>>();
  } catch (const std::exception& e) {
    const std::string why = "kernel id " + std::to_string(id) + ": bad options: " + e.what();
    if (!damage) throw Error(ErrorKind::cache, "i8g::cache::Cache", why);
    *damage = why;
    return {};
  }
}

StoredKernel read_kernel(const sql::Stmt& s, bool with_blobs, bool listing = false) {
  StoredKernel k;
  int c = 0;
  k.id = s.i64(c++);
  k.key.name = s.text(c++);
  k.key.arch = s.text(c++);
  k.key.compiler_version = s.text(c++);
  k.key.generator_hash = s.text(c++);
  k.key.options_hash = s.text(c++);
  k.family = s.text(c++);
  k.problem_key = s.text(c++);
  k.config = s.text(c++);
  k.n = s.i64(c++);
  k.k = s.i64(c++);
  k.entry = s.text(c++);
  k.lowered_name = s.text(c++);
  k.options = parse_options(s.text(c++), k.id, listing ? &k.damage : nullptr);
  k.binary_size = s.i64(c++);
  k.binary_sha256 = s.text(c++);
  k.registers = int(s.i64(c++));
  k.stack_bytes = int(s.i64(c++));
  k.spill_bytes = int(s.i64(c++));
  k.smem_bytes = int(s.i64(c++));
  k.occupancy = s.f64(c++);
  k.compile_ms = s.f64(c++);
  k.created_at = s.i64(c++);
  k.report_json = s.text(c++);
  if (with_blobs) {
    k.source = s.text(c++);
    k.ir = s.text(c++);
    k.log = s.text(c++);
    k.isa = s.text(c++);
    k.binary = s.blob(c++);
  }
  return k;
}

bool binary_intact(const StoredKernel& k) {
  return sha256_hex(k.binary.data(), k.binary.size()) == k.binary_sha256 && is_device_code(k.binary);
}

// A corrupt_entry Error: callers (the JIT) compile such a kernel afresh.
StoredKernel checked(StoredKernel k, const std::string& path) {
  std::string why;
  if (sha256_hex(k.binary.data(), k.binary.size()) != k.binary_sha256) why = "sha256 mismatch";
  else if (!is_device_code(k.binary, &why)) why = "not device code: " + why;
  if (!why.empty())
    throw Error(ErrorKind::corrupt_entry, "i8g::cache::Cache::get_kernel",
                "cache file " + path + ": kernel id " + std::to_string(k.id) + " (" + k.key.name +
                    ") fails its content check (" + why + "); run the audit");
  return k;
}

void bind_kernel_fields(sql::Stmt& s, const StoredKernel& k, int64_t created_at) {
  int i = 0;
  for (const std::string* t : {&k.key.name, &k.key.arch, &k.key.compiler_version, &k.key.generator_hash,
                               &k.key.options_hash, &k.family, &k.problem_key, &k.config})
    s.bind(++i, *t);
  s.bind(++i, k.n);
  s.bind(++i, k.k);
  s.bind(++i, k.entry);
  s.bind(++i, k.lowered_name);
  s.bind(++i, nlohmann::json(k.options).dump());
  s.bind(++i, int64_t(k.binary.size()));
  s.bind(++i, k.binary_sha256);
  for (int v : {k.registers, k.stack_bytes, k.spill_bytes, k.smem_bytes}) s.bind(++i, v);
  s.bind(++i, k.occupancy);
  s.bind(++i, k.compile_ms);
  s.bind(++i, created_at);
  for (const std::string* t : {&k.report_json, &k.source, &k.ir, &k.log, &k.isa}) s.bind(++i, *t);
  s.bind_blob(++i, k.binary.data(), k.binary.size());
}

constexpr const char* kInsert =
    "INSERT INTO kernels (name, arch, compiler_version, generator_hash, options_hash, family, "
    "problem_key, config, n, k, entry, lowered_name, options, binary_size, binary_sha256, registers, "
    "stack_bytes, spill_bytes, smem_bytes, occupancy, compile_ms, created_at, report_json, "
    "source, ir, log, isa, binary) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

constexpr const char* kRepair =
    "UPDATE kernels SET name=?1, arch=?2, compiler_version=?3, generator_hash=?4, options_hash=?5, "
    "family=?6, problem_key=?7, config=?8, n=?9, k=?10, entry=?11, lowered_name=?12, options=?13, "
    "binary_size=?14, binary_sha256=?15, registers=?16, stack_bytes=?17, spill_bytes=?18, "
    "smem_bytes=?19, occupancy=?20, compile_ms=?21, created_at=?22, report_json=?23, "
    "source=?24, ir=?25, log=?26, isa=?27, binary=?28 WHERE id=?29";

constexpr const char* kByKey =
    "WHERE name=? AND arch=? AND compiler_version=? AND generator_hash=? AND options_hash=?";

void bind_key(sql::Stmt& s, const BinaryKey& key) {
  s.bind(1, key.name).bind(2, key.arch).bind(3, key.compiler_version).bind(4, key.generator_hash);
  s.bind(5, key.options_hash);
}

}  // namespace

bool is_device_code(const std::vector<uint8_t>& b, std::string* why) {
  auto no = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  static const char kBundle[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (b.size() >= sizeof kBundle - 1 && std::equal(kBundle, kBundle + sizeof kBundle - 1, b.begin()))
    return no("a clang offload bundle (it may carry host code; store the extracted device code object)");
  if (b.size() < 64 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F')
    return no("not an ELF file (" + std::to_string(b.size()) + " bytes)");
  if (b[4] != 2 || b[5] != 1) return no("not a 64-bit little-endian ELF");
  const unsigned machine = unsigned(b[18]) | unsigned(b[19]) << 8;  // e_machine
  if (machine != 190 && machine != 224)
    return no("an ELF for e_machine " + std::to_string(machine) + ", not a GPU (EM_CUDA 190, EM_AMDGPU 224)");
  return true;
}

std::string options_hash(const std::vector<std::string>& options) {
  std::string joined;
  for (const std::string& o : options) joined.append(o).push_back('\0');
  return sha256_hex(joined.data(), joined.size());
}

bool is_override(const std::string& generator_hash) { return generator_hash.rfind(kOverridePrefix, 0) == 0; }

std::string sha256_hex(const void* data, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  static const char empty = 0;
  if (EVP_Digest(size ? data : &empty, size, md, &len, EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::cache, "EVP_Digest", "sha256 failed");
  static const char* hex = "0123456789abcdef";
  std::string out(size_t(len) * 2, '0');
  for (unsigned i = 0; i < len; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

int64_t Cache::put_kernel(const StoredKernel& k) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  require_writable(impl_->mode, impl_->path, "i8g::cache::Cache::put_kernel");
  // An empty options hash is what rows of schema 1 read as: a new row must say its options.
  if (k.key.name.empty() || k.key.arch.empty() || k.key.options_hash.empty())
    throw Error(ErrorKind::cache, "i8g::cache::Cache::put_kernel",
                "kernel key needs a name, an arch and an options hash");
  if (sha256_hex(k.binary.data(), k.binary.size()) != k.binary_sha256)
    throw Error(ErrorKind::cache, "i8g::cache::Cache::put_kernel",
                "kernel " + k.key.name + ": binary_sha256 does not match the binary; not stored");
  if (std::string why; !is_device_code(k.binary, &why))
    throw Error(ErrorKind::cache, "i8g::cache::Cache::put_kernel",
                "kernel " + k.key.name + ": refused: the binary is " + why + "; the cache stores GPU device code only");
  int64_t created_at = k.created_at ? k.created_at : now_unix();
  sql::Db& db = *impl_->db;
  sql::WriteTxn txn(db);
  sql::Stmt find(db, select_sql(true, kByKey).c_str());
  bind_key(find, k.key);
  if (find.step()) {
    StoredKernel old = read_kernel(find, true);
    if (binary_intact(old)) return old.id;  // same or different content: the stored one stays
    find.reset();
    sql::Stmt repair(db, kRepair);
    bind_kernel_fields(repair, k, created_at);
    repair.bind(29, old.id).run();
    txn.commit();
    return old.id;
  }
  sql::Stmt insert(db, kInsert);
  bind_kernel_fields(insert, k, created_at);
  insert.run();
  int64_t id = db.last_insert_rowid();
  txn.commit();
  return id;
}

bool Cache::add_sass(int64_t id, const std::string& isa, const std::string& report_json) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  require_writable(impl_->mode, impl_->path, "i8g::cache::Cache::add_sass");
  if (isa.empty()) return false;
  sql::Db& db = *impl_->db;
  sql::WriteTxn txn(db);
  sql::Stmt update(db, "UPDATE kernels SET isa=?1, report_json=?2 WHERE id=?3 AND isa=''");
  update.bind(1, isa).bind(2, report_json).bind(3, id).run();
  const bool changed = db.changes() > 0;
  txn.commit();
  return changed;
}

std::optional<StoredKernel> Cache::get_kernel(const BinaryKey& key) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, select_sql(true, kByKey).c_str());
  bind_key(s, key);
  if (!s.step()) return std::nullopt;
  return checked(read_kernel(s, true), impl_->path);
}

std::optional<StoredKernel> Cache::get_kernel(int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  sql::Stmt s(*impl_->db, select_sql(true, "WHERE id=?").c_str());
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return checked(read_kernel(s, true), impl_->path);
}

std::vector<StoredKernel> Cache::list_kernels(const ListFilter& f) {
  std::optional<std::regex> re;
  try {
    if (!f.name_regex.empty()) re.emplace(f.name_regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error(ErrorKind::cache, "i8g::cache::Cache::list_kernels", "bad name regex '" + f.name_regex + "': " + e.what());
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<StoredKernel> out;
  // Filter on the name first; the row's other columns are only read for names that match.
  sql::Stmt s(*impl_->db, select_sql(f.with_blobs, "ORDER BY name, arch, compiler_version, generator_hash, options_hash, id").c_str());
  while (s.step()) {
    if (re && !std::regex_search(s.text(1), *re)) continue;
    out.push_back(read_kernel(s, f.with_blobs, /*listing=*/true));
  }
  return out;
}

Cache::Audit Cache::audit() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Audit a;
  try {
    sql::Stmt check(*impl_->db, "PRAGMA integrity_check");
    while (check.step()) a.integrity += (a.integrity.empty() ? "" : "\n") + check.text(0);
  } catch (const Error& e) {
    a.integrity = e.message();
  }
  try {
    sql::Stmt s(*impl_->db, "SELECT id, binary_sha256, binary FROM kernels ORDER BY id");
    while (s.step()) {
      std::vector<uint8_t> bin = s.blob(2);
      if (sha256_hex(bin.data(), bin.size()) != s.text(1)) a.hash_mismatch.push_back(s.i64(0));
      else if (!is_device_code(bin)) a.not_device_code.push_back(s.i64(0));
    }
  } catch (const Error& e) {
    if (a.integrity == "ok") a.integrity = e.message();
    else a.integrity += "\n" + e.message();
  }
  return a;
}

}  // namespace i8g::cache
