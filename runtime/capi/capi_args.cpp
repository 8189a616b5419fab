#include "runtime/capi/capi_args.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "generator/problem_enums.hpp"

namespace i8g {
namespace {

// A C caller may store any int in an enum field, but in C++ loading a value outside the enum's
// range is undefined behaviour (UBSan: "not a valid value for type"). Enum fields are therefore
// read as the int they are, never as the enum type.
template <class E>
int raw(const E& field) {
  static_assert(sizeof(E) == sizeof(int), "C enums of this ABI are int-sized");
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

}  // namespace

GemmProblem problem_from_c(const i8gemm_problem* p, const char* where) {
  if (!p) throw Error(ErrorKind::invalid_argument, where, "problem is null");
  GemmProblem g;
  g.n = p->n;
  g.k = p->k;
  const int layout = raw(p->weight_layout), act = raw(p->act_scale), wscale = raw(p->weight_scale),
            out = raw(p->out);
  const auto l = from_c_value<WeightLayout>(layout);
  if (!l) throw Error(ErrorKind::invalid_argument, where, "weight_layout must be I8GEMM_WEIGHT_NK or _KN");
  g.layout = *l;
  const auto a = from_c_value<ActScale>(act);
  if (!a) throw Error(ErrorKind::invalid_argument, where, "act_scale must be PER_TENSOR or PER_TOKEN");
  g.act_scale = *a;
  const auto w = from_c_value<WeightScale>(wscale);
  if (!w) throw Error(ErrorKind::invalid_argument, where, "weight_scale must be PER_TENSOR or PER_CHANNEL");
  g.weight_scale = *w;
  const auto o = from_c_value<OutType>(out);
  if (!o) throw Error(ErrorKind::invalid_argument, where, "out must be one of I8GEMM_OUT_*");
  g.out = *o;
  g.bias = p->has_bias != 0;
  g.asymmetric = p->asymmetric != 0;
  if (std::string why = g.invalid_reason(); !why.empty())
    throw Error(ErrorKind::invalid_argument, where, why);
  return g;
}

I8gArgs args_from_c(const i8gemm_args* args, const char* where) {
  if (!args) throw Error(ErrorKind::invalid_argument, where, "args is null");
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
  return a;
}

QuantizeRequest quantize_request_from_c(const i8gemm_quantize_args* args) {
  if (!args) throw Error(ErrorKind::invalid_argument, "i8gemm_quantize", "args is null");
  const int granularity = raw(args->granularity), in_type = raw(args->in_type);
  if (granularity != I8GEMM_SCALE_PER_TOKEN && granularity != I8GEMM_SCALE_PER_TENSOR)
    throw Error(ErrorKind::invalid_argument, "i8gemm_quantize",
                   "granularity must be PER_TOKEN or PER_TENSOR");
  if (in_type < I8GEMM_IN_BF16 || in_type > I8GEMM_IN_F32)
    throw Error(ErrorKind::invalid_argument, "i8gemm_quantize", "in_type must be one of I8GEMM_IN_*");
  // Per token runs one block per row (gridDim.x <= 2^31 - 1); per tensor counts m * k
  // elements in an int64. Either limit broken would launch a truncated grid or overflow.
  constexpr int64_t kMaxRows = (int64_t(1) << 31) - 1;
  if (args->m > kMaxRows || (args->m > 0 && args->k > INT64_MAX / args->m))
    throw Error(ErrorKind::invalid_argument, "i8gemm_quantize",
                   fmt::format("m={} k={}: m must be at most 2^31-1 and m*k must fit in 64 bits", args->m, args->k));
  QuantizeRequest q;
  q.m = args->m;
  q.k = args->k;
  q.in_type = in_type;
  q.per_token = granularity == I8GEMM_SCALE_PER_TOKEN;
  q.x = args->x;
  q.asymmetric = args->asymmetric != 0;
  q.x_q = args->x_q;
  q.scale = args->scale;
  q.zero_point = args->zero_point;
  return q;
}

GemmProblem workspace_query_from_c(const i8gemm_problem* problem, int64_t max_m, size_t* bytes) {
  const char* where = "i8gemm_workspace_size";
  if (!bytes) throw Error(ErrorKind::invalid_argument, where, "bytes is null");
  *bytes = 0;
  if (max_m < 0) throw Error(ErrorKind::invalid_argument, where, fmt::format("max_m={} is negative", max_m));
  return problem_from_c(problem, where);
}

CallerWorkspace workspace_from_c(void* workspace, size_t workspace_bytes) {
  const CallerWorkspace w{workspace, workspace_bytes};
  if (std::string why = workspace_refusal(w, 0); !why.empty())
    throw Error(ErrorKind::invalid_argument, "i8gemm_run_with_workspace", why);
  return w;
}

EngineOptions engine_options_from_c(const i8gemm_options* o, const char* where) {
  EngineOptions e;
  if (!o) return e;
  const size_t need = offsetof(i8gemm_options, strict) + sizeof(o->strict);
  if (o->struct_size < need)
    throw Error(ErrorKind::invalid_argument, where,
                fmt::format("options.struct_size is {}, less than the {} bytes this version reads; set it to "
                            "sizeof(i8gemm_options)",
                            o->struct_size, need));
  e.strict = o->strict != 0;
  return e;
}

void fill_choice(const Choice& c, i8gemm_choice* out) {
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->kernel, sizeof out->kernel, "%s", c.kernel.c_str());
  out->bucket_max_m = c.bucket_max_m;
  out->origin = c.tuned ? I8GEMM_CHOICE_TUNED : I8GEMM_CHOICE_UNTUNED_DEFAULT;
  out->binary = c.binary == Choice::Binary::cached     ? I8GEMM_BINARY_CACHED
                : c.binary == Choice::Binary::compiled ? I8GEMM_BINARY_COMPILED
                                                       : I8GEMM_BINARY_CUBLASLT;
}

i8gemm_status status_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return I8GEMM_ERROR_INVALID_ARGUMENT;
    case ErrorKind::no_device: return I8GEMM_ERROR_NO_DEVICE;
    case ErrorKind::unsupported: return I8GEMM_ERROR_UNSUPPORTED;
    case ErrorKind::not_prepared: return I8GEMM_ERROR_NOT_PREPARED;
    case ErrorKind::compile: return I8GEMM_ERROR_COMPILE;
    case ErrorKind::cache:
    case ErrorKind::corrupt_entry: return I8GEMM_ERROR_CACHE;
    case ErrorKind::cuda: return I8GEMM_ERROR_CUDA;
    case ErrorKind::out_of_memory: return I8GEMM_ERROR_OUT_OF_MEMORY;
    case ErrorKind::not_in_cache: return I8GEMM_ERROR_NOT_IN_CACHE;
    case ErrorKind::internal: return I8GEMM_ERROR_INTERNAL;
  }
  return I8GEMM_ERROR_INTERNAL;
}

}  // namespace i8g
