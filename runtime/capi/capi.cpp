// The C ABI (include/i8gemm/i8gemm.h): statuses out, never an exception across the boundary.
#include <fmt/format.h>

#include <cstring>
#include <new>
#include <string>

#include "i8gemm/i8gemm.h"
#include "core/log.hpp"
#include "runtime/capi/capi_args.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/serve/engine.hpp"

struct i8gemm_context {
  std::unique_ptr<i8g::Engine> engine;
};

namespace {

thread_local std::string t_last_error;

i8gemm_status ok() {
  t_last_error.clear();
  return I8GEMM_SUCCESS;
}

i8gemm_status fail(i8gemm_status s, const std::string& what) {
  t_last_error = what;
  return s;
}

// Runs f, mapping every exception to a status and a message.
template <class F>
i8gemm_status guarded(F&& f) {
  try {
    f();
    return ok();
  } catch (const i8g::Error& e) {
    return fail(i8g::status_for(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(I8GEMM_ERROR_INTERNAL, "out of host memory");
  } catch (const std::exception& e) {
    return fail(I8GEMM_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(I8GEMM_ERROR_INTERNAL, "unknown error");
  }
}

i8g::Engine& engine_of(i8gemm_context* ctx, const char* where) {
  if (!ctx || !ctx->engine) throw i8g::Error(i8g::ErrorKind::invalid_argument, where, "context is null");
  return *ctx->engine;
}

}  // namespace

extern "C" {

i8gemm_status i8gemm_create(int device, const char* cache_path, i8gemm_context** out) {
  return i8gemm_create_with_options(device, cache_path, nullptr, out);
}

i8gemm_status i8gemm_create_with_options(int device, const char* cache_path, const i8gemm_options* options,
                                         i8gemm_context** out) {
  return guarded([&] {
    if (!out) throw i8g::Error(i8g::ErrorKind::invalid_argument, "i8gemm_create", "out is null");
    *out = nullptr;
    const i8g::EngineOptions o = i8g::engine_options_from_c(options, "i8gemm_create");
    // The engine makes its device's primary context current for its own setup; a C caller gets
    // its thread's context back as it was (issue 14: leave the caller's CUDA state as found).
    CUcontext caller = nullptr;
    const bool had_driver = i8g::Driver::get(nullptr) != nullptr;
    if (had_driver) i8g::driver().cuCtxGetCurrent(&caller);
    auto ctx = std::make_unique<i8gemm_context>();
    try {
      ctx->engine = std::make_unique<i8g::Engine>(device, cache_path ? cache_path : "", o);
    } catch (...) {
      if (had_driver) i8g::driver().cuCtxSetCurrent(caller);
      throw;
    }
    i8g::driver().cuCtxSetCurrent(caller);
    *out = ctx.release();
  });
}

i8gemm_status i8gemm_chosen(i8gemm_context* ctx, const i8gemm_problem* problem, int64_t m, i8gemm_choice* out) {
  return guarded([&] {
    i8g::Engine& e = engine_of(ctx, "i8gemm_chosen");
    if (!out) throw i8g::Error(i8g::ErrorKind::invalid_argument, "i8gemm_chosen", "out is null");
    std::memset(out, 0, sizeof *out);
    const i8g::GemmProblem p = i8g::problem_from_c(problem, "i8gemm_chosen");
    const std::optional<i8g::Choice> c = e.choice_for(p, m);
    if (!c)
      throw i8g::Error(i8g::ErrorKind::not_prepared, "i8gemm_chosen",
                       fmt::format("problem {} is not prepared for m={}", p.key(), m));
    i8g::fill_choice(*c, out);
  });
}

i8gemm_status i8gemm_set_log_level(int level) {
  return guarded([&] {
    const std::optional<i8g::LogLevel> l = i8g::parse_log_level(std::to_string(level));
    if (!l)
      throw i8g::Error(i8g::ErrorKind::invalid_argument, "i8gemm_set_log_level",
                       fmt::format("level {} is not one of 0 (quiet) to 4 (debug)", level));
    i8g::set_log_level(*l);
  });
}

void i8gemm_set_log_callback(i8gemm_log_fn fn, void* user) { i8g::set_log_sink(fn, user); }

void i8gemm_destroy(i8gemm_context* ctx) {
  if (!ctx) return;
  CUcontext caller = nullptr;
  i8g::driver().cuCtxGetCurrent(&caller);  // a context exists, so the driver was loaded
  try {
    delete ctx;
  } catch (...) {
  }
  i8g::driver().cuCtxSetCurrent(caller);
}

i8gemm_status i8gemm_prepare(i8gemm_context* ctx, const i8gemm_problem* problem, int64_t max_m) {
  return guarded([&] { engine_of(ctx, "i8gemm_prepare").prepare(i8g::problem_from_c(problem, "i8gemm_prepare"), max_m); });
}

i8gemm_status i8gemm_run(i8gemm_context* ctx, const i8gemm_problem* problem, const i8gemm_args* args,
                         void* stream) {
  return guarded([&] {
    i8g::Engine& e = engine_of(ctx, "i8gemm_run");
    const i8g::GemmProblem p = i8g::problem_from_c(problem, "i8gemm_run");
    const I8gArgs a = i8g::args_from_c(args, "i8gemm_run");
    e.run(p, a, static_cast<CUstream>(stream));
  });
}

i8gemm_status i8gemm_workspace_size(i8gemm_context* ctx, const i8gemm_problem* problem, int64_t max_m,
                                    size_t* bytes) {
  return guarded([&] {
    // The checks that need no device come first (tests/runtime/capi pins them without a GPU).
    const i8g::GemmProblem p = i8g::workspace_query_from_c(problem, max_m, bytes);
    *bytes = engine_of(ctx, "i8gemm_workspace_size").workspace_size(p, max_m);
  });
}

i8gemm_status i8gemm_run_with_workspace(i8gemm_context* ctx, const i8gemm_problem* problem, const i8gemm_args* args,
                                        void* workspace, size_t workspace_bytes, void* stream) {
  return guarded([&] {
    const char* where = "i8gemm_run_with_workspace";
    const i8g::CallerWorkspace ws = i8g::workspace_from_c(workspace, workspace_bytes);
    i8g::Engine& e = engine_of(ctx, where);
    e.run(i8g::problem_from_c(problem, where), i8g::args_from_c(args, where), static_cast<CUstream>(stream), &ws);
  });
}

i8gemm_status i8gemm_weight_colsum(i8gemm_context* ctx, const i8gemm_problem* problem, const int8_t* w,
                                   int32_t* colsum, void* stream) {
  return guarded([&] {
    engine_of(ctx, "i8gemm_weight_colsum")
        .weight_colsum(i8g::problem_from_c(problem, "i8gemm_weight_colsum"), w, colsum, static_cast<CUstream>(stream));
  });
}

i8gemm_status i8gemm_quantize(i8gemm_context* ctx, const i8gemm_quantize_args* args, void* stream) {
  return guarded([&] {
    i8g::Engine& e = engine_of(ctx, "i8gemm_quantize");
    const i8g::QuantizeRequest q = i8g::quantize_request_from_c(args);
    e.quantize(q, static_cast<CUstream>(stream));
  });
}

const char* i8gemm_last_error(void) { return t_last_error.c_str(); }

const char* i8gemm_version(void) { return I8GEMM_VERSION_STRING; }

const char* i8gemm_status_string(i8gemm_status status) {
  // A C caller may pass any int; loading one outside the enum's range as the enum type is
  // undefined behaviour in C++, so the value is read as the int it is.
  int s;
  std::memcpy(&s, &status, sizeof s);
  switch (s) {
    case I8GEMM_SUCCESS: return "success";
    case I8GEMM_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case I8GEMM_ERROR_NO_DEVICE: return "no CUDA device";
    case I8GEMM_ERROR_UNSUPPORTED: return "unsupported";
    case I8GEMM_ERROR_NOT_PREPARED: return "not prepared";
    case I8GEMM_ERROR_COMPILE: return "compilation failed";
    case I8GEMM_ERROR_CACHE: return "cache error";
    case I8GEMM_ERROR_CUDA: return "CUDA error";
    case I8GEMM_ERROR_INTERNAL: return "internal error";
    case I8GEMM_ERROR_OUT_OF_MEMORY: return "out of device memory";
    case I8GEMM_ERROR_NOT_IN_CACHE: return "not in the cache (strict mode)";
  }
  return "unknown status";
}

}  // extern "C"
