// The C ABI (include/i8gemm/i8gemm.h): statuses out, never an exception across the boundary.
#include <fmt/format.h>

#include <new>
#include <string>

#include "i8gemm/i8gemm.h"
#include "runtime/engine.hpp"

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
  } catch (const i8g::ApiError& e) {
    return fail(static_cast<i8gemm_status>(e.status()), e.what());
  } catch (const i8g::Error& e) {
    const bool cuda = e.where().rfind("cu", 0) == 0 || e.where() == "cuda";
    return fail(cuda ? I8GEMM_ERROR_CUDA : I8GEMM_ERROR_INTERNAL, e.what());
  } catch (const std::bad_alloc&) {
    return fail(I8GEMM_ERROR_INTERNAL, "out of host memory");
  } catch (const std::exception& e) {
    return fail(I8GEMM_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(I8GEMM_ERROR_INTERNAL, "unknown error");
  }
}

i8g::GemmProblem to_problem(const i8gemm_problem* p, const char* where) {
  if (!p) throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, "problem is null");
  i8g::GemmProblem g;
  g.n = p->n;
  g.k = p->k;
  if (p->weight_layout != I8GEMM_WEIGHT_NK && p->weight_layout != I8GEMM_WEIGHT_KN)
    throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, "weight_layout must be I8GEMM_WEIGHT_NK or _KN");
  g.layout = p->weight_layout == I8GEMM_WEIGHT_KN ? i8g::WeightLayout::kn : i8g::WeightLayout::nk;
  if (p->act_scale != I8GEMM_SCALE_PER_TENSOR && p->act_scale != I8GEMM_SCALE_PER_TOKEN)
    throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, "act_scale must be PER_TENSOR or PER_TOKEN");
  g.act_scale = p->act_scale == I8GEMM_SCALE_PER_TOKEN ? i8g::ActScale::per_token : i8g::ActScale::per_tensor;
  if (p->weight_scale != I8GEMM_SCALE_PER_TENSOR && p->weight_scale != I8GEMM_SCALE_PER_CHANNEL)
    throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, "weight_scale must be PER_TENSOR or PER_CHANNEL");
  g.weight_scale = p->weight_scale == I8GEMM_SCALE_PER_CHANNEL ? i8g::WeightScale::per_channel
                                                                : i8g::WeightScale::per_tensor;
  switch (p->out) {
    case I8GEMM_OUT_BF16: g.out = i8g::OutType::bf16; break;
    case I8GEMM_OUT_F16: g.out = i8g::OutType::f16; break;
    case I8GEMM_OUT_F32: g.out = i8g::OutType::f32; break;
    case I8GEMM_OUT_I32: g.out = i8g::OutType::i32; break;
    default: throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, "out must be one of I8GEMM_OUT_*");
  }
  g.bias = p->has_bias != 0;
  g.asymmetric = p->asymmetric != 0;
  if (std::string why = g.invalid_reason(); !why.empty())
    throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, why);
  return g;
}

i8g::Engine& engine_of(i8gemm_context* ctx, const char* where) {
  if (!ctx || !ctx->engine) throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, where, "context is null");
  return *ctx->engine;
}

}  // namespace

extern "C" {

i8gemm_status i8gemm_create(int device, const char* cache_path, i8gemm_context** out) {
  return guarded([&] {
    if (!out) throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_create", "out is null");
    *out = nullptr;
    auto ctx = std::make_unique<i8gemm_context>();
    ctx->engine = std::make_unique<i8g::Engine>(device, cache_path ? cache_path : "");
    *out = ctx.release();
  });
}

void i8gemm_destroy(i8gemm_context* ctx) {
  try {
    delete ctx;
  } catch (...) {
  }
}

i8gemm_status i8gemm_prepare(i8gemm_context* ctx, const i8gemm_problem* problem, int64_t max_m) {
  return guarded([&] { engine_of(ctx, "i8gemm_prepare").prepare(to_problem(problem, "i8gemm_prepare"), max_m); });
}

i8gemm_status i8gemm_run(i8gemm_context* ctx, const i8gemm_problem* problem, const i8gemm_args* args,
                         void* stream) {
  return guarded([&] {
    i8g::Engine& e = engine_of(ctx, "i8gemm_run");
    const i8g::GemmProblem p = to_problem(problem, "i8gemm_run");
    if (!args) throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run", "args is null");
    I8gArgs a{};
    a.x = reinterpret_cast<const signed char*>(args->x);
    a.w = reinterpret_cast<const signed char*>(args->w);
    a.x_scale = args->x_scale;
    a.w_scale = args->w_scale;
    a.bias = args->bias;
    a.x_zero_point = args->x_zero_point;
    a.w_colsum = args->w_colsum;
    a.out = args->out;
    a.m = args->m;
    e.run(p, a, static_cast<CUstream>(stream));
  });
}

i8gemm_status i8gemm_weight_colsum(i8gemm_context* ctx, const i8gemm_problem* problem, const int8_t* w,
                                   int32_t* colsum, void* stream) {
  return guarded([&] {
    engine_of(ctx, "i8gemm_weight_colsum")
        .weight_colsum(to_problem(problem, "i8gemm_weight_colsum"), w, colsum, static_cast<CUstream>(stream));
  });
}

i8gemm_status i8gemm_quantize(i8gemm_context* ctx, const i8gemm_quantize_args* args, void* stream) {
  return guarded([&] {
    i8g::Engine& e = engine_of(ctx, "i8gemm_quantize");
    if (!args) throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_quantize", "args is null");
    if (args->granularity != I8GEMM_SCALE_PER_TOKEN && args->granularity != I8GEMM_SCALE_PER_TENSOR)
      throw i8g::ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_quantize",
                          "granularity must be PER_TOKEN or PER_TENSOR");
    i8g::QuantizeRequest q;
    q.m = args->m;
    q.k = args->k;
    q.in_type = int(args->in_type);
    q.x = args->x;
    q.per_token = args->granularity == I8GEMM_SCALE_PER_TOKEN;
    q.asymmetric = args->asymmetric != 0;
    q.x_q = args->x_q;
    q.scale = args->scale;
    q.zero_point = args->zero_point;
    e.quantize(q, static_cast<CUstream>(stream));
  });
}

const char* i8gemm_last_error(void) { return t_last_error.c_str(); }

const char* i8gemm_status_string(i8gemm_status s) {
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
  }
  return "unknown status";
}

}  // extern "C"
