/* What a C caller does: pass any int where the ABI takes an enum (legal in C). */
#include "i8gemm/i8gemm.h"

const char* i8g_fuzz_status_string_from_c(int status) { return i8gemm_status_string((i8gemm_status)status); }
