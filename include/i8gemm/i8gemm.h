/* i8gemm: INT8 W8A8 GEMM with a fused dequant epilogue, for serving code.
 *
 *   out[M,N] = ((float(x_q . w_q^T - zp_x * colsum_w) * s_x) * s_w) (+ bias)
 *
 * Prepare before capture, run inside:
 *   i8gemm_create(0, NULL, &ctx);                    default cache, device 0
 *   i8gemm_prepare(ctx, &problem, 4096);             loads or compiles every kernel for M <= 4096
 *   ... cudaStreamBeginCapture(stream) ...
 *   i8gemm_run(ctx, &problem, &args, stream);        one asynchronous launch, no sync, no alloc
 *
 * Every function returns a status and never throws; i8gemm_last_error() says what was wrong,
 * in words, for the calling thread. Several threads may use one context at once. i8gemm_run
 * uses one workspace per prepared problem and orders eager runs of one problem on several
 * streams one after the other; runs that should overlap, and graphs replayed on several streams
 * at once, use i8gemm_run_with_workspace with a separate workspace each (README, "Streams").
 * The formulas, rounding and limits are in docs/quantization.md. */
#ifndef I8GEMM_H
#define I8GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define I8GEMM_API __attribute__((visibility("default")))

/* This header's version (the project's one version number: CMake reads it from here). The
 * library's own is i8gemm_version(); the soname changes with the major number. */
#define I8GEMM_VERSION_MAJOR 0
#define I8GEMM_VERSION_MINOR 1
#define I8GEMM_VERSION_PATCH 0
#define I8GEMM_VERSION_STRING "0.1.0"

typedef enum {
  I8GEMM_SUCCESS = 0,
  I8GEMM_ERROR_INVALID_ARGUMENT = 1, /* null/misaligned pointer, bad shape, m out of range */
  I8GEMM_ERROR_NO_DEVICE = 2,        /* no CUDA driver or device */
  I8GEMM_ERROR_UNSUPPORTED = 3,      /* problem or option not supported on this device */
  I8GEMM_ERROR_NOT_PREPARED = 4,     /* run/quantize of something prepare did not cover */
  I8GEMM_ERROR_COMPILE = 5,          /* JIT compilation failed (log in last_error) */
  I8GEMM_ERROR_CACHE = 6,            /* cache file unusable */
  I8GEMM_ERROR_CUDA = 7,             /* a CUDA driver call failed */
  I8GEMM_ERROR_INTERNAL = 8,
  I8GEMM_ERROR_OUT_OF_MEMORY = 9,    /* device memory exhausted; nothing half-made is kept and the
                                        context stays usable: free memory and call again */
  I8GEMM_ERROR_NOT_IN_CACHE = 10     /* strict mode: prepare needed kernels the cache lacks (all
                                        named in last_error); nothing was compiled */
} i8gemm_status;

typedef enum { I8GEMM_WEIGHT_NK = 0, I8GEMM_WEIGHT_KN = 1 } i8gemm_weight_layout;
typedef enum {
  I8GEMM_SCALE_PER_TENSOR = 0,
  I8GEMM_SCALE_PER_TOKEN = 1,   /* activations: one scale per row m */
  I8GEMM_SCALE_PER_CHANNEL = 2  /* weights: one scale per output column n */
} i8gemm_scale;
typedef enum { I8GEMM_OUT_BF16 = 0, I8GEMM_OUT_F16 = 1, I8GEMM_OUT_F32 = 2, I8GEMM_OUT_I32 = 3 } i8gemm_out;
typedef enum { I8GEMM_IN_BF16 = 0, I8GEMM_IN_F16 = 1, I8GEMM_IN_F32 = 2 } i8gemm_in;

typedef struct {
  int64_t n;
  int64_t k;
  i8gemm_weight_layout weight_layout;
  i8gemm_scale act_scale;    /* PER_TENSOR or PER_TOKEN */
  i8gemm_scale weight_scale; /* PER_TENSOR or PER_CHANNEL */
  i8gemm_out out;
  int has_bias;              /* fp32 bias[n] */
  int asymmetric;            /* int32 activation zero points */
} i8gemm_problem;

typedef struct {
  int64_t m;
  const int8_t* x;             /* [M,K] row-major */
  const int8_t* w;             /* [N,K] or [K,N] row-major */
  const float* x_scale;        /* [1] or [M]; unused for I32 output */
  const float* w_scale;        /* [1] or [N]; unused for I32 output */
  const float* bias;           /* [N] when has_bias */
  const int32_t* x_zero_point; /* [1] or [M] (as act_scale) when asymmetric */
  const int32_t* w_colsum;     /* [N] from i8gemm_weight_colsum, when asymmetric */
  void* out;                   /* [M,N] row-major */
} i8gemm_args;

typedef struct i8gemm_context i8gemm_context;

/* cache_path NULL: $I8GEMM_CACHE, else ~/.cache/i8gemm/cache.sqlite. */
I8GEMM_API i8gemm_status i8gemm_create(int device, const char* cache_path, i8gemm_context** out);

/* Options of a context. Set struct_size = sizeof(i8gemm_options) and zero what you do not set:
 * a later version may add fields after these, read only when struct_size covers them. */
typedef struct {
  uint32_t struct_size;
  /* Nonzero: prepare never compiles. It serves from the cache's binaries (tuned winners, or the
   * untuned defaults a `tune --compile-only` stored) or fails with I8GEMM_ERROR_NOT_IN_CACHE
   * naming every kernel it lacks, so a server can refuse to start instead of paying a cold JIT.
   * I8GEMM_STRICT=1 in the environment turns it on for every context. */
  int strict;
} i8gemm_options;
/* i8gemm_create with options; options NULL is i8gemm_create. */
I8GEMM_API i8gemm_status i8gemm_create_with_options(int device, const char* cache_path,
                                                    const i8gemm_options* options, i8gemm_context** out);
I8GEMM_API void i8gemm_destroy(i8gemm_context* ctx);

/* Loads from the cache, or JIT-compiles with the heuristic default, every kernel that runs for
 * M in [1, max_m], and the utility kernels (quantize, colsum). Call it before any capture. */
I8GEMM_API i8gemm_status i8gemm_prepare(i8gemm_context* ctx, const i8gemm_problem* problem,
                                        int64_t max_m);

/* out = the operator above, on `stream` (a CUstream / cudaStream_t; NULL = default stream).
 * Never compiles, allocates or synchronizes; graph-capture safe. m == 0 is a no-op. */
I8GEMM_API i8gemm_status i8gemm_run(i8gemm_context* ctx, const i8gemm_problem* problem,
                                    const i8gemm_args* args, void* stream);

/* Concurrent runs of one problem: i8gemm_run keeps its scratch memory (split-K partials and
 * counters, cuBLASLt's int32 accumulator and workspace) in the prepared problem, one for all its
 * runs. An eager run that uses it on another stream than the last such run waits (on the GPU,
 * through an event) for that run, so the two never overlap; a capture is not ordered (it
 * executes nothing) and a graph's replays cannot be, so a graph captured with i8gemm_run must
 * not replay while another run of the problem is in flight on another stream.
 * i8gemm_run_with_workspace takes that memory from the caller instead, as vLLM hands CUTLASS a
 * workspace: give each stream (or each run or graph that may overlap another) its own.
 *
 * i8gemm_workspace_size: the bytes any run of a prepared problem with m <= max_m needs
 * (0 when none does: no split-K kernel or cuBLASLt bucket serves those rows). Host only; the
 * answer holds until the problem is prepared again (a wider prepare may choose other kernels).
 * NOT_PREPARED when prepare did not cover the problem up to max_m rows. */
I8GEMM_API i8gemm_status i8gemm_workspace_size(i8gemm_context* ctx, const i8gemm_problem* problem,
                                               int64_t max_m, size_t* bytes);
/* i8gemm_run with the caller's workspace: device memory of the context's device, 256-byte
 * aligned, of at least what i8gemm_workspace_size says for this run's m (NULL and 0 where that is
 * 0). Its contents on entry do not matter and the run may overwrite all of it: split-K's arrival
 * counters are cleared on `stream` first (a memset node inside a capture), so one workspace may
 * serve any runs, of any problems, ordered on one stream, and a graph captured with it replays
 * with it (two graphs that may run at once need two). A workspace too small, misaligned, or
 * not device memory is INVALID_ARGUMENT with nothing launched. Otherwise as i8gemm_run. */
I8GEMM_API i8gemm_status i8gemm_run_with_workspace(i8gemm_context* ctx, const i8gemm_problem* problem,
                                                   const i8gemm_args* args, void* workspace,
                                                   size_t workspace_bytes, void* stream);

/* What i8gemm_run launches for m rows of a prepared problem: the kernel (or cuBLASLt
 * algorithm), the M bucket it serves, whether it is a tuned winner or the untuned default, and
 * whether its binary came from the cache or was compiled by this process. */
typedef enum { I8GEMM_CHOICE_TUNED = 0, I8GEMM_CHOICE_UNTUNED_DEFAULT = 1 } i8gemm_choice_origin;
typedef enum {
  I8GEMM_BINARY_CACHED = 0,   /* loaded from the cache */
  I8GEMM_BINARY_COMPILED = 1, /* JIT-compiled by this process (cold prepare) */
  I8GEMM_BINARY_CUBLASLT = 2  /* no generated kernel: cuBLASLt + the dequant kernel */
} i8gemm_binary_origin;
typedef struct {
  char kernel[256];            /* e.g. i8g_sm90a_mma_sync_n2560_..._sk4, or cublaslt:algo=2 */
  int64_t bucket_max_m;        /* the bucket serves every M up to this one above the previous */
  i8gemm_choice_origin origin;
  i8gemm_binary_origin binary;
} i8gemm_choice;
/* I8GEMM_ERROR_NOT_PREPARED when prepare did not cover m rows of the problem. */
I8GEMM_API i8gemm_status i8gemm_chosen(i8gemm_context* ctx, const i8gemm_problem* problem, int64_t m,
                                       i8gemm_choice* out);

/* colsum[n] = sum_k w(n,k), for asymmetric activations; once per weight. */
I8GEMM_API i8gemm_status i8gemm_weight_colsum(i8gemm_context* ctx, const i8gemm_problem* problem,
                                              const int8_t* w, int32_t* colsum, void* stream);

/* Quantizes x[M,K] (bf16/f16/f32, row-major) to int8 with per-token ([M] scales) or
 * per-tensor ([1]) scales; asymmetric also writes zero points ([M] or [1]). Formulas in
 * docs/quantization.md. Graph-capture safe once i8gemm_prepare has run on this context. */
typedef struct {
  int64_t m;
  int64_t k;
  i8gemm_in in_type;
  const void* x;
  i8gemm_scale granularity; /* PER_TOKEN or PER_TENSOR */
  int asymmetric;
  int8_t* x_q;          /* [M,K] */
  float* scale;         /* [M] or [1] */
  int32_t* zero_point;  /* [M] or [1] when asymmetric, else may be NULL */
} i8gemm_quantize_args;
I8GEMM_API i8gemm_status i8gemm_quantize(i8gemm_context* ctx, const i8gemm_quantize_args* args,
                                         void* stream);

/* The library's messages (warnings about a cache it cannot use, a damaged entry, ...): written
 * to stderr as "i8gemm: <level>: <text>", or handed to a callback, when at or below the level.
 * The level is process-wide: I8GEMM_LOG_LEVEL (quiet, error, warning, info, debug), else
 * warning; info adds one line per kernel compiled. */
typedef enum {
  I8GEMM_LOG_QUIET = 0,
  I8GEMM_LOG_ERROR = 1,
  I8GEMM_LOG_WARNING = 2,
  I8GEMM_LOG_INFO = 3,
  I8GEMM_LOG_DEBUG = 4
} i8gemm_log_level;
I8GEMM_API i8gemm_status i8gemm_set_log_level(int level);
/* fn(level, message, user) for each message (no prefix, no newline), from whichever thread
 * logs, one at a time; it must not call i8gemm. NULL restores stderr. */
typedef void (*i8gemm_log_fn)(int level, const char* message, void* user);
I8GEMM_API void i8gemm_set_log_callback(i8gemm_log_fn fn, void* user);

/* The calling thread's last error, in words ("" after a success). */
I8GEMM_API const char* i8gemm_last_error(void);
/* The loaded library's version, "MAJOR.MINOR.PATCH" (compare with I8GEMM_VERSION_STRING). */
I8GEMM_API const char* i8gemm_version(void);
I8GEMM_API const char* i8gemm_status_string(i8gemm_status status);

#ifdef __cplusplus
}
#endif
#endif /* I8GEMM_H */
