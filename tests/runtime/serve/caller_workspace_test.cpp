// The checks of a caller's workspace (i8gemm_run_with_workspace) that need no device: a run is
// refused, before anything is launched, for a workspace smaller than it needs, not 256-byte
// aligned, or null with a size; a null workspace of 0 bytes serves a run that needs none.
#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/gpu/lt_dequant.hpp"
#include "runtime/serve/workspace.hpp"

namespace i8g {
namespace {

void* at(uintptr_t address) { return reinterpret_cast<void*>(address); }

TEST(WorkspaceRefusal, LargeEnoughAndAlignedIsAccepted) {
  EXPECT_EQ(workspace_refusal({at(0x10000), 4096}, 4096), "");
  EXPECT_EQ(workspace_refusal({at(0x10000), 8192}, 4096), "") << "more than needed is fine";
  EXPECT_EQ(workspace_refusal({at(0x10100), 4096}, 0), "") << "256-byte aligned is enough";
}

TEST(WorkspaceRefusal, NullWithNoBytesServesARunThatNeedsNone) {
  EXPECT_EQ(workspace_refusal({nullptr, 0}, 0), "");
  const std::string why = workspace_refusal({nullptr, 0}, 1024);
  EXPECT_NE(why.find("workspace_bytes is 0, less than the 1024 bytes"), std::string::npos) << why;
}

TEST(WorkspaceRefusal, TooSmallSaysBothSizes) {
  const std::string why = workspace_refusal({at(0x10000), 4095}, 4096);
  EXPECT_NE(why.find("workspace_bytes is 4095, less than the 4096 bytes this run needs"), std::string::npos) << why;
}

TEST(WorkspaceRefusal, MisalignedIsRefusedWhateverItsSize) {
  for (uintptr_t off : {uintptr_t(1), uintptr_t(4), uintptr_t(16), uintptr_t(128), uintptr_t(255)}) {
    const std::string why = workspace_refusal({at(0x10000 + off), size_t(1) << 20}, 0);
    EXPECT_NE(why.find("is not 256-byte aligned"), std::string::npos) << off << ": " << why;
  }
}

TEST(WorkspaceRefusal, NullWithBytesIsRefused) {
  const std::string why = workspace_refusal({nullptr, 512}, 0);
  EXPECT_NE(why.find("workspace is null but workspace_bytes is 512"), std::string::npos) << why;
}

// A cuBLASLt bucket's share: the int32 accumulator of m x N (rounded up to 256 bytes, so that
// cuBLASLt's workspace after it stays aligned), then the workspace the algorithm asked for, at
// most what the run hands cuBLASLt.
TEST(WorkspaceRefusal, CublasLtNeedsTheAccumulatorThenItsAlgorithmsWorkspace) {
  LtAlgorithm a;
  a.workspace = 1000;
  EXPECT_EQ(LtDequant::scratch_bytes(2560, 3, a), size_t(3 * 2560 * 4) + 1000);
  EXPECT_EQ(LtDequant::scratch_bytes(100, 1, a), size_t(512) + 1000) << "400 bytes of int32 round up to 512";
  EXPECT_EQ(LtDequant::scratch_bytes(100, 0, a), 0u) << "m = 0 runs nothing";
  a.workspace = size_t(1) << 40;
  EXPECT_EQ(LtDequant::scratch_bytes(64, 4, a), size_t(1024) + LtGemm::kWorkspaceBytes);
}

}  // namespace
}  // namespace i8g
