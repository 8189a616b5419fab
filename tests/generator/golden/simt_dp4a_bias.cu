// i8g_sm90a_simt_dp4a_n2560_k4096_nk_tok_ch_bf16_bias_bm32_bn128_bk32_tm4_tn4_wm1_wn1_s1_sk1_v16
#include "simt_dp4a.cuh"

template __global__ void i8g::simt_dp4a_kernel<32, 128, 32, 4, 4, 16, 2560LL, 4096LL, 0, 1, 1, 0, 1, 0>(const __grid_constant__ I8gArgs);
