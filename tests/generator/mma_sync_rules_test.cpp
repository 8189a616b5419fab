// The mma_sync family's generator rules: where it runs, why a config is refused, the untuned
// default's choice, launch shape and emitted source. (Every candidate validating and its name
// round-tripping is pinned for all families in generator_test.cpp.)
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

const GemmProblem kTp4[] = {{2560, 4096}, {4096, 2048}, {768, 4096}, {4096, 384}};
const char* kTensorArchs[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};

std::vector<KernelConfig> mma_of(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::mma_sync) out.push_back(c);
  return out;
}

KernelConfig some_mma(const GemmProblem& p, const Target& t) {
  const std::vector<KernelConfig> cs = mma_of(p, t);
  EXPECT_FALSE(cs.empty());
  return cs.empty() ? KernelConfig{} : cs.front();
}

}  // namespace

TEST(MmaSyncRules, CandidatesExistExactlyWhereTheFamilyRuns) {
  for (const char* arch : kTensorArchs) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& p : kTp4) {
      const size_t n = mma_of(p, t).size();
      EXPECT_GT(n, 0u) << p.key() << " on " << arch;
      EXPECT_LE(n, 64u) << p.key() << " on " << arch
                        << ": 40 unsplit + 24 split-K at most; keep tune --compile-only quick";
    }
    EXPECT_TRUE(mma_of({2560, 4095}, t).empty()) << "K % 16 != 0 needs simt_dp4a";
    EXPECT_TRUE(mma_of({2560, 4104}, t).empty()) << "K % 16 == 8 needs simt_dp4a";
    // [K,N] weights run on mma_sync when N % 16 == 0 (16-byte chunks along n), with the same
    // rules and power-of-two bn; otherwise simt_dp4a.
    for (const GemmProblem& nk : kTp4) {
      const GemmProblem kn{nk.n, nk.k, WeightLayout::kn};
      const std::vector<KernelConfig> cs = mma_of(kn, t);
      EXPECT_EQ(cs.size(), mma_of(nk, t).size()) << kn.key() << " on " << arch;
      for (const KernelConfig& c : cs) EXPECT_EQ(c.bn & (c.bn - 1), 0) << c;
    }
    EXPECT_FALSE(mma_of({1040, 4096, WeightLayout::kn}, t).empty()) << "N % 16 == 0";
    EXPECT_FALSE(mma_of({48, 80, WeightLayout::kn}, t).empty()) << "N and K tails, multiples of 16";
    EXPECT_TRUE(mma_of({1000, 4096, WeightLayout::kn}, t).empty()) << "[K,N] with N % 16 == 8";
    EXPECT_TRUE(mma_of({2561, 4096, WeightLayout::kn}, t).empty()) << "[K,N] with odd N";
    EXPECT_TRUE(mma_of({2560, 4088, WeightLayout::kn}, t).empty()) << "[K,N] with K % 16 == 8";
    EXPECT_FALSE(mma_of({1000, 4096}, t).empty()) << "[N,K] needs no N alignment";
  }
  EXPECT_TRUE(mma_of({2560, 4096}, Target::from_arch("sm_75")).empty());
}

TEST(MmaSyncRules, InvalidReasonNamesTheBrokenRule) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096};
  const KernelConfig good = some_mma(p, t);
  ASSERT_EQ(invalid_reason(p, good, t), "");
  auto why = [&](KernelConfig c, GemmProblem q = GemmProblem{2560, 4096},
                 const char* arch = "sm_90a") {
    return invalid_reason(q, c, Target::from_arch(arch));
  };
  auto has = [](const std::string& s, const char* w) { return s.find(w) != std::string::npos; };
  EXPECT_TRUE(has(why(good, p, "sm_75"), "sm_80")) << why(good, p, "sm_75");
  EXPECT_EQ(why(good, {2560, 4096, WeightLayout::kn}), "") << "[K,N] runs on mma_sync";
  EXPECT_TRUE(has(why(good, {2552, 4096, WeightLayout::kn}), "[K,N]"));
  EXPECT_TRUE(has(why(good, {2552, 4096, WeightLayout::kn}), "N=2552"));
  EXPECT_TRUE(has(why(good, {2560, 4088, WeightLayout::kn}), "K=4088"));
  EXPECT_TRUE(has(why(good, {2560, 4088}), "multiple of 16"));
  KernelConfig c = good;
  c.split_k = 17;
  EXPECT_TRUE(has(why(c), "split_k=17")) << why(c);
  c.split_k = 3;  // K = 128 is at most 2 tiles of bk >= 64: a third slice would be empty
  EXPECT_TRUE(has(why(c, {2560, 128}), "slice without K tiles")) << why(c, {2560, 128});
  c.split_k = 0;
  EXPECT_NE(why(c), "");
  c = good;
  c.bm = 48;
  c.warps_m = 2;
  EXPECT_TRUE(has(why(c), "warp tile M"));
  c = good;
  c.bn = c.warps_n * 8;
  EXPECT_TRUE(has(why(c), "warp tile N"));
  c = good;
  c.bk = 48;
  EXPECT_TRUE(has(why(c), "bk="));
  c = good;
  c.stages = 7;
  EXPECT_TRUE(has(why(c), "stages"));
  c = good;
  c.bm = c.bn = 256;
  c.bk = 256;
  c.stages = 6;
  c.warps_m = c.warps_n = 2;
  EXPECT_TRUE(has(why(c), "shared memory")) << why(c);
  c = good;
  c.bm = c.bn = 256;
  c.bk = 64;
  c.stages = 2;
  c.warps_m = 1;
  c.warps_n = 2;  // 256 x 128 warp tiles: 1024 accumulators per thread
  EXPECT_TRUE(has(why(c), "registers")) << why(c);
  c = good;
  c.bm = 64;
  c.bn = 96;  // a multiple of 16 per warp, not a power of two: [N,K] only
  c.bk = 64;
  c.warps_m = c.warps_n = 2;
  c.stages = 3;
  EXPECT_EQ(why(c), "");
  const GemmProblem kn{2560, 4096, WeightLayout::kn};
  EXPECT_TRUE(has(why(c, kn), "power of two")) << why(c, kn);
  c = good;
  c.thread_m = 4;  // a field mma_sync does not use
  EXPECT_TRUE(has(why(c), "thread_m")) << why(c);
  c = good;
  c.vec = 4;  // its loads are 16 bytes
  EXPECT_TRUE(has(why(c), "vec")) << why(c);
}

TEST(MmaSyncRules, EveryCandidateFitsItsTargetsSharedMemory) {
  for (const char* arch : kTensorArchs) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& nk : kTp4)
      for (const GemmProblem& p : {nk, GemmProblem{nk.n, nk.k, WeightLayout::kn}})
        for (const KernelConfig& c : mma_of(p, t)) {
          const LaunchShape s = launch_shape({p, c, t.arch}, 1);
          EXPECT_EQ(int(s.dynamic_smem), c.stages * (c.bm + c.bn) * c.bk) << "same bytes either layout";
          EXPECT_LE(int(s.dynamic_smem), t.smem_per_block_optin) << c;
          EXPECT_GE(c.stages, 2);
          EXPECT_EQ(c.static_smem_bytes(), 0) << "mma_sync uses dynamic shared memory only";
        }
  }
}

TEST(MmaSyncRules, HeuristicPrefersTensorCoresFromSm80AndFallsBack) {
  for (const char* arch : kTensorArchs) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& p : kTp4)
      for (int64_t m : {1, 16, 65, 256, 4096}) {
        const KernelConfig d = heuristic_default(p, t, m);
        // sm_90a's [N,K] problems take the TMA family from M = 17 up, and decode_mma up
        // to M = 16 where N >= 768 and K >= 384 (all of these).
        const bool h = std::string(arch) == "sm_90a", sm90 = h || std::string(arch) == "sm_90";
        const Family want = h && m >= 17                                ? Family::wgmma_tma
                            : sm90 && m <= 16 && p.n >= 768 && p.k >= 384 ? Family::decode_mma
                                                                        : Family::mma_sync;
        EXPECT_EQ(d.family, want) << p.key() << " m=" << m << " on " << arch;
        EXPECT_EQ(heuristic_default(p, t, m, Family::mma_sync).family, Family::mma_sync);
        EXPECT_EQ(invalid_reason(p, d, t), "");
        EXPECT_EQ(d, heuristic_default(p, t, m));  // deterministic
        EXPECT_EQ(heuristic_default(p, t, m, Family::simt_dp4a).family, Family::simt_dp4a);
      }
    EXPECT_EQ(heuristic_default({2560, 4095}, t, 16).family, Family::simt_dp4a);
    for (const GemmProblem& nk : kTp4)
      for (int64_t m : {1, 16, 256, 4096}) {
        const GemmProblem kn{nk.n, nk.k, WeightLayout::kn};
        const KernelConfig d = heuristic_default(kn, t, m);
        EXPECT_EQ(d.family, Family::mma_sync) << kn.key() << " m=" << m << " on " << arch;
        EXPECT_EQ(invalid_reason(kn, d, t), "");
      }
    EXPECT_EQ(heuristic_default({1040, 4096, WeightLayout::kn}, t, 16).family, Family::mma_sync);
    EXPECT_EQ(heuristic_default({1000, 4096, WeightLayout::kn}, t, 16).family, Family::simt_dp4a);
    EXPECT_THROW(heuristic_default({1000, 4096, WeightLayout::kn}, t, 16, Family::mma_sync), Error);
    EXPECT_THROW(heuristic_default({2560, 4095}, t, 16, Family::mma_sync), Error);
  }
  EXPECT_EQ(heuristic_default({2560, 4096}, Target::from_arch("sm_75"), 16).family, Family::simt_dp4a);
}

TEST(MmaSyncRules, DecodeGetsShortTilesAndPrefillLargeOnes) {
  const Target t = Target::from_arch("sm_90a");
  for (const GemmProblem& p : kTp4) {
    EXPECT_LE(heuristic_default(p, t, 1).bm, 32) << p.key();
    EXPECT_LE(heuristic_default(p, t, 16).bm, 32) << p.key();
    EXPECT_GE(heuristic_default(p, t, 4096).bm, 64) << p.key();
  }
}

TEST(MmaSyncRules, LaunchShapeAndAlignment) {
  const Target t = Target::from_arch("sm_80");
  const GemmProblem p{1000, 4096};
  for (const KernelConfig& c : mma_of(p, t)) {
    EXPECT_EQ(required_alignment(c), 16);
    for (int64_t m : {1, 65, 3072}) {
      const LaunchShape s = launch_shape({p, c, t.arch}, m);
      EXPECT_EQ(int64_t(s.grid[0]), (p.n + c.bn - 1) / c.bn);
      EXPECT_EQ(int64_t(s.grid[1]), (m + c.bm - 1) / c.bm);
      EXPECT_EQ(s.grid[2], unsigned(c.split_k));
      EXPECT_EQ(int(s.block[0]), 32 * c.warps_m * c.warps_n);
    }
  }
}

TEST(MmaSyncEmit, SourceMatchesGoldenFile) {
  GemmProblem p{2560, 4096};
  p.bias = true;
  KernelConfig c;
  c.family = Family::mma_sync;
  c.bm = 128; c.bn = 128; c.bk = 64; c.warps_m = 2; c.warps_n = 4; c.stages = 4;
  const KernelSpec spec{p, c, "sm_90a"};
  ASSERT_EQ(invalid_reason(p, c, Target::from_arch("sm_90a")), "");
  const Source s = emit(spec);
  const std::string path = std::string(I8G_SOURCE_DIR) + "/tests/generator/golden/mma_sync_bias.cu";
  std::ifstream f(path);
  ASSERT_TRUE(f) << "missing " << path;
  std::stringstream golden;
  golden << f.rdbuf();
  EXPECT_EQ(s.code, golden.str());
  EXPECT_EQ(s.name, "i8g_sm90a_mma_sync_n2560_k4096_nk_tok_ch_bf16_bias_bm128_bn128_bk64_wm2_wn4_s4_sk1");
  EXPECT_EQ(s.entry, "i8g::mma_sync_kernel<128, 128, 64, 2, 4, 4, 1, 2560LL, 4096LL, 0, 1, 1, 0, 1, 0>");
  EXPECT_EQ(KernelSpec::parse_name(s.name), spec);
}

TEST(MmaSyncRules, SplitKVariantsServeDecodeWithNoEmptySlice) {
  for (const char* arch : kTensorArchs) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& p : kTp4) {
      int split = 0;
      for (const KernelConfig& c : mma_of(p, t)) {
        const KernelSpec s{p, c, t.arch};
        if (c.split_k == 1) {
          EXPECT_EQ(workspace_bytes(s, 4096), 0u) << s.name();
          EXPECT_EQ(splitk_counters(s, 4096).blocks, 0) << s.name() << ": nothing to clear";
          continue;
        }
        ++split;
        EXPECT_LE(c.bm, 64) << s.name() << ": split-K is for decode tiles";
        EXPECT_EQ(launch_shape(s, 1).grid[2], unsigned(c.split_k));
        // Every slice gets K tiles: ceil(ktiles / split) * (split - 1) < ktiles.
        const int64_t ktiles = (p.k + c.bk - 1) / c.bk, per = (ktiles + c.split_k - 1) / c.split_k;
        EXPECT_LT(per * (c.split_k - 1), ktiles) << s.name();
        EXPECT_GE(per, 2) << s.name() << ": a slice keeps at least two K tiles to pipeline";
        // Per tile: a counter padded to 32 words + one BM x BN int32 partial per slice.
        for (int64_t m : {int64_t(1), int64_t(100)}) {
          const LaunchShape l = launch_shape(s, m);
          const size_t tiles = size_t(l.grid[0]) * l.grid[1];
          EXPECT_EQ(workspace_bytes(s, m), 4 * tiles * (32 + size_t(c.split_k) * c.bm * c.bn)) << s.name();
          // A caller's workspace gets exactly the counter words cleared: one block per tile.
          const SplitKCounters sk = splitk_counters(s, m);
          EXPECT_EQ(size_t(sk.blocks), tiles) << s.name();
          EXPECT_EQ(sk.words, 32u) << s.name();
          EXPECT_EQ(sk.pitch, 4 * (32 + size_t(c.split_k) * c.bm * c.bn)) << s.name();
        }
      }
      // Shapes whose one row of 256-wide tiles leaves SMs idle get splits, unless K is too
      // short to keep two 128-deep tiles in each of two slices.
      if ((p.n + 255) / 256 < t.sm_count && p.k >= 4 * 128) {
        EXPECT_GT(split, 0) << p.key() << " on " << arch;
      }
    }
  }
}

TEST(MmaSyncRules, DecodeDefaultSplitsKWhereOneRowOfTilesLeavesSmsIdle) {
  const Target t = Target::from_arch("sm_80");  // 108 SMs (on sm_90, decode_mma serves M <= 16)
  // 768 x 4096 at M = 1: at most 24 tiles of 32 columns, so the default must split K.
  const KernelConfig d = heuristic_default({768, 4096}, t, 1);
  EXPECT_EQ(d.family, Family::mma_sync);
  EXPECT_GT(d.split_k, 1) << d;
  // The same on sm_90a where decode_mma does not serve (N below 768).
  const KernelConfig narrow = heuristic_default({512, 4096}, Target::from_arch("sm_90a"), 1);
  EXPECT_EQ(narrow.family, Family::mma_sync);
  EXPECT_GT(narrow.split_k, 1) << narrow;
  // Prefill fills the SMs with tiles: no split.
  for (const GemmProblem& p : kTp4) EXPECT_EQ(heuristic_default(p, t, 4096).split_k, 1) << p.key();
}
