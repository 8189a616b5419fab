// i8g_sm90a_mma_sync_n2560_k4096_nk_tok_ch_bf16_bias_bm128_bn128_bk64_wm2_wn4_s4_sk1
#include "mma_sync.cuh"

template __global__ void i8g::mma_sync_kernel<128 /*BM*/, 128 /*BN*/, 64 /*BK*/, 2 /*WM*/, 4 /*WN*/, 4 /*STAGES*/, 1 /*SPLIT_K*/, 2560LL /*N_*/, 4096LL /*K_*/, 0 /*LAYOUT*/, 1 /*ACT*/, 1 /*WSC*/, 0 /*OUT*/, 1 /*BIAS*/, 0 /*ASYM*/>(const __grid_constant__ I8gArgs);
