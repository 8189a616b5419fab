// The autotuning cache: one SQLite file holding compiled kernels (binary beside its source,
// options, IR, log, ISA and resource report), every timing of every candidate, and the winner
// per tuning key. Keys hold everything that changes the answer, so a stale entry is a miss,
// never a wrong hit. Typed columns, WAL mode, one transaction per write, a schema version.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

namespace i8g::cache {

// Lower-case hex SHA-256 (OpenSSL EVP).
std::string sha256_hex(const void* data, size_t size);

// The cache holds device code only: nothing in it is ever executed on the host. A binary is
// device code when it is a 64-bit little-endian ELF whose e_machine is EM_CUDA (190, a CUBIN)
// or EM_AMDGPU (224, a code object). Offload bundles are refused too: they may carry host
// objects, and hipRTC's bundles are unpacked before storing. `why` says what it is instead.
bool is_device_code(const std::vector<uint8_t>& bytes, std::string* why = nullptr);

// sha256 over compile options, each followed by a NUL (so {"a b"} and {"a", "b"} differ): the
// options part of a BinaryKey.
std::string options_hash(const std::vector<std::string>& options);

// What generator_hash holds for a kernel compiled from a source override rather than from the
// generator: this prefix, then a hash of the override source and the templates it includes.
inline constexpr const char* kOverridePrefix = "override:";
bool is_override(const std::string& generator_hash);

// Identifies a compiled binary; all five must match to reach it.
struct BinaryKey {
  std::string name;              // kernel name, e.g. i8g_sm90a_simt_dp4a_n2560_k4096_nk_tok_ch_bf16_...
  std::string arch;              // "sm_90a" (keeps the a suffix), later "gfx90a"
  std::string compiler_version;  // "nvrtc 13.0"
  std::string generator_hash;    // sha256 of generator + templates, or kOverridePrefix + ...
  std::string options_hash;      // options_hash(compile options); "" in rows of schema 1
  std::string to_string() const;  // "name [sm_90a, nvrtc 13.0, gen 0123abcd..., opts 4567...]" (for people)
  bool operator==(const BinaryKey& o) const;
  bool operator!=(const BinaryKey& o) const { return !(*this == o); }
};

struct StoredKernel {
  int64_t id = 0;
  BinaryKey key;
  std::string family, problem_key, config;  // text forms from the generator
  int64_t n = 0, k = 0;
  std::string source, entry, lowered_name;
  std::vector<std::string> options;  // compile options
  std::vector<uint8_t> binary;
  std::string binary_sha256;
  std::string ir;           // PTX
  std::string log;          // whole compiler log
  std::string isa;          // SASS text (may be empty)
  std::string report_json;  // full ResourceReport as JSON
  int registers = -1, stack_bytes = -1, spill_bytes = -1, smem_bytes = -1;
  double occupancy = 0;
  double compile_ms = 0;
  int64_t created_at = 0;  // unix seconds; put_kernel fills it in when 0
  int64_t binary_size = 0;  // filled in by the cache (also when listed without blobs)
  // Listing only: why a stored field could not be read (e.g. its options are not a JSON list
  // of strings); empty when the row is intact. get_kernel throws for such a row instead.
  std::string damage;
};

// Everything that changes which kernel wins.
struct TuneKey {
  std::string problem_key;
  int64_t m_bucket = 0;
  std::string arch;
  int sm_count = 0;
  std::string gpu_name;
  std::string compiler_version;
  std::string driver_version;
  std::string generator_hash;
  std::string to_string() const;  // one line, every field named (for people)
  bool operator==(const TuneKey& o) const;
  bool operator!=(const TuneKey& o) const { return !(*this == o); }
};

// Why winners stored for `want`'s problem are not `want`'s (its M bucket aside): for each field
// of the key that differs, "<field> <theirs> (this one: <ours>)", joined with "; ", e.g.
// "generator de7061bc41f2 (this one: 9a0c3e11d2b7)"; empty when only the bucket differs or the
// problem is another one. Prepare logs it where a cache holds winners of the problem that
// were measured elsewhere (another GPU, driver, NVRTC or generator), so that a re-tune is due.
std::string tune_key_mismatch(const TuneKey& have, const TuneKey& want);

// What became of a tuning candidate; stored as its text ("ok", "rejected", "failed"), which
// the schema's CHECK also lists, so files written before the enum read the same.
enum class CandidateStatus {
  ok,        // verified bit-exact, then timed (fully, or only probed when pruned)
  rejected,  // ran, but its output differs from the reference
  failed,    // did not compile, load or launch
};
const char* to_string(CandidateStatus s);
std::optional<CandidateStatus> parse_candidate_status(const std::string& text);

// One candidate's measurement for a TuneKey; every candidate is kept, not only the winner.
// An empty time was not measured and is NULL in the file: a pruned candidate has only its
// probe (eager), a rejected or failed one neither.
struct Timing {
  TuneKey key;
  std::string candidate;  // kernel name, or "cublaslt:algo=<n>"
  int64_t kernel_id = 0;  // 0 for baselines
  CandidateStatus status = CandidateStatus::ok;
  std::string reason;
  std::optional<double> eager_median_us, eager_p90_us, eager_min_us;
  std::optional<double> graph_median_us, graph_p90_us, graph_min_us;
  int64_t created_at = 0;  // put_timings fills it in when 0
};

struct Winner {
  TuneKey key;
  std::string candidate;
  int64_t kernel_id = 0;
  double time_us = 0;
  double baseline_us = 0;
  double speedup = 0;
  int64_t created_at = 0;  // put_winner fills it in when 0
};

// Without blobs, binary/source/ir/log/isa come back empty (listing stays fast).
struct ListFilter {
  std::string name_regex;  // ECMAScript, searched (not anchored) in the kernel name
  bool with_blobs = false;
};

// What remove_stale keeps: entries made with these. Empty driver/gpu: not a criterion.
struct Current {
  std::string compiler_version;
  std::string generator_hash;
  std::string driver_version;  // timings and winners only
  std::string gpu_name;        // timings and winners only
  // Further current compilers (NVRTC and hipRTC entries live in one file; both are current).
  std::vector<std::string> other_compiler_versions = {};
  // arch -> the options hash this build compiles that arch with. A kernel of an arch not
  // listed is stale too. Empty: not a criterion.
  std::map<std::string, std::string> options_hash_by_arch = {};
};

// Rows remove_stale removes (or would remove), per table.
struct StaleCounts {
  int64_t kernels = 0, timings = 0, winners = 0;
  int64_t total() const { return kernels + timings + winners; }
};

// One SQLite connection. Safe to share between threads (calls are serialized); a forked child
// must open its own Cache. Many processes may write one file at once.
class Cache {
 public:
  enum class Mode { read_only, read_write };
  // 2 added kernels.options_hash; a version-1 file is migrated when opened read-write and
  // read as it is (each kernel with an empty options hash) when opened read-only.
  static constexpr int kSchemaVersion = 2;

  // $I8GEMM_CACHE, else $XDG_CACHE_HOME/i8gemm/cache.sqlite, else $HOME/.cache/i8gemm/cache.sqlite.
  static std::string default_path();
  // Empty when `path` is a regular file whose SQLite header carries i8gemm's application id
  // (so even a damaged i8gemm cache is recognized by its first page), else why it is not one.
  // Reads 100 bytes; never opens the database.
  static std::string not_a_cache_reason(const std::string& path);
  // Empty when only its owner can write `path` (if it exists) and no other user can add or
  // replace files in its directory (a world- or group-writable directory is accepted only with
  // the sticky bit, as /tmp has); else why not. The cache holds code that runs in the process
  // that loads it: ssh's rule for keys.
  static std::string shared_write_reason(const std::string& path);

  // read_write creates the parent directory and the file (never group/world writable).
  // Throws Error when the file is not a database, is damaged, has a newer schema than this
  // build reads, belongs to another application, or (read_only) does not exist. Never deletes
  // or rewrites a file that is not an i8gemm cache.
  Cache(const std::string& path, Mode mode);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  const std::string& path() const;
  int schema_version() const;
  Mode mode() const;

  // Returns the id of the entry under k.key. An existing entry is never overwritten: same or
  // different content, its id comes back (one exception: an entry whose stored binary fails its
  // own hash check is repaired with k). Throws Error when k.binary_sha256 != sha256(k.binary)
  // or when k.binary is not device code (is_device_code): host code is never stored.
  int64_t put_kernel(const StoredKernel& k);
  // With blobs. Throws Error ("fails its content check") when the stored binary fails its hash
  // check or is not device code: never a wrong binary, never host code.
  std::optional<StoredKernel> get_kernel(const BinaryKey& key);
  std::optional<StoredKernel> get_kernel(int64_t id);
  std::vector<StoredKernel> list_kernels(const ListFilter& f = {});  // by name, arch
  // Fills in the SASS of entry `id` where it was stored without any (prepare's reports: serving
  // spawns no disassembler): isa and report_json change only while isa is empty, so stored SASS
  // is never replaced. Returns whether the entry changed.
  bool add_sass(int64_t id, const std::string& isa, const std::string& report_json);

  void put_timings(const std::vector<Timing>& t);  // one transaction; appended, never replaced
  std::vector<Timing> timings(const TuneKey& key);  // oldest first
  std::vector<Timing> timings_for_kernel(int64_t kernel_id);
  std::vector<Timing> all_timings();  // every row of every key, oldest first (merging caches)

  // Replaces the winner for that exact TuneKey (a re-tune result), one transaction.
  void put_winner(const Winner& w);
  std::optional<Winner> get_winner(const TuneKey& key);
  std::vector<Winner> list_winners();

  // Re-hashes every stored binary; ids whose sha256 does not match, plus the text of
  // PRAGMA integrity_check ("ok" when fine, else the problems or the error it hit).
  struct Audit {
    std::string integrity;
    std::vector<int64_t> hash_mismatch;
    std::vector<int64_t> not_device_code;  // rows a hostile writer could have added by hand
  };
  Audit audit();

  // Removes entries made with another compiler/generator (kernels: or other compile options;
  // timings and winners: or another driver/GPU where given); returns how many rows went, one
  // transaction. Only on request. Source-override kernels are stale by their generator hash.
  int64_t remove_stale(const std::string& compiler_version, const std::string& generator_hash);
  int64_t remove_stale(const Current& current, StaleCounts* counts = nullptr);
  // What remove_stale(current) would remove, without removing it (works read-only).
  StaleCounts count_stale(const Current& current);

 private:
  // The SQLite handle, checked (application, schema, WAL): the constructor's second half.
  void open_checked(const std::string& path, Mode mode, bool has_content);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::ostream& operator<<(std::ostream& os, const BinaryKey& k);
std::ostream& operator<<(std::ostream& os, const TuneKey& k);

}  // namespace i8g::cache
