// The one int8 tensor-core instruction of sm_80+ that mma_sync and decode_mma issue:
// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, c += a * b (fragments: mma_frag.h).
#pragma once

namespace i8g {

__device__ __forceinline__ void mma_s8(int (&c)[4], const unsigned (&a)[4], unsigned b0,
                                       unsigned b1) {
  // Not volatile: a pure function of its operands, free to be scheduled.
  asm(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace i8g
