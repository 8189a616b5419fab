// i8g_sm90a_mma_sync_n2560_k4096_nk_tok_ch_bf16_bias_bm128_bn128_bk64_tm0_tn0_wm2_wn4_s4_sk1_v16
#include "mma_sync.cuh"

template __global__ void i8g::mma_sync_kernel<128, 128, 64, 2, 4, 4, 1, 2560LL, 4096LL, 0, 1, 1, 0, 1, 0>(const __grid_constant__ I8gArgs);
