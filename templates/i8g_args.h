/* The one argument block every i8gemm kernel takes (passed as __grid_constant__).
 * Shared verbatim by device templates and host launch code: plain C, no includes. */
#ifndef I8G_ARGS_H
#define I8G_ARGS_H

struct I8gArgs {
  const signed char* x;      /* [M,K] int8, row-major */
  const signed char* w;      /* [N,K] or [K,N] int8, row-major */
  const float* x_scale;      /* [1] or [M] */
  const float* w_scale;      /* [1] or [N] */
  const float* bias;         /* [N] or null */
  const int* x_zero_point;   /* [M] (per token) or [1] (per tensor); asymmetric only */
  const int* w_colsum;       /* [N] sum over k of w; asymmetric only */
  void* out;                 /* [M,N] row-major, bf16 / f16 / f32 / i32 */
  int* workspace;            /* split-K partials; null when split_k == 1 */
  long long m;
  long long n;               /* equal to the kernel's N when specialized */
  long long k;
};

#endif
