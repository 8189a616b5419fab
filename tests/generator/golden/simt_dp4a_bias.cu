// i8g_sm90a_simt_dp4a_n2560_k4096_nk_tok_ch_bf16_bias_bm32_bn128_bk32_tm4_tn4_v16
#include "simt_dp4a.cuh"

template __global__ void i8g::simt_dp4a_kernel<32 /*BM*/, 128 /*BN*/, 32 /*BK*/, 4 /*TM*/, 4 /*TN*/, 16 /*VEC*/, 2560LL /*N_*/, 4096LL /*K_*/, 0 /*LAYOUT*/, 1 /*ACT*/, 1 /*WSC*/, 0 /*OUT*/, 1 /*BIAS*/, 0 /*ASYM*/>(const __grid_constant__ I8gArgs);
