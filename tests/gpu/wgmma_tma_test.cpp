// The experimental wgmma_tma family on an sm_90a GPU: every candidate bit-exact against the CPU
// reference over row, column and K tails, every epilogue option, grids with more tiles than SMs
// (each persistent block walks several tiles, so the ring's phases carry across tiles), repeated
// launches and a captured graph replayed with new activations. Split-K configs (tile slices as
// work units, reduced through the workspace) the same way, and every launch of one must leave
// the workspace's arrival counters at zero for the next. Skips elsewhere.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "generator/generator.hpp"
#include "tests/gpu/kernel_check.hpp"

namespace i8g::gputest {
namespace {

class WgmmaTma : public KernelCheckTest {
 protected:
  void SetUp() override {
    KernelCheckTest::SetUp();
    if (IsSkipped()) return;
    if (target_.arch != "sm_90a") GTEST_SKIP() << "wgmma_tma needs sm_90a, this GPU is " << target_.arch;
    target_.experimental_wgmma = true;
    target_.experimental_staged_store = true;  // every sweep below includes the staged-store twins
  }
  std::vector<KernelSpec> specs(const GemmProblem& p) const { return family_specs(p, Family::wgmma_tma); }
  // The candidates with (split) or without (!split) split-K.
  std::vector<KernelSpec> specs(const GemmProblem& p, bool split) const {
    std::vector<KernelSpec> out;
    for (const KernelSpec& s : specs(p))
      if ((s.config.split_k > 1) == split) out.push_back(s);
    return out;
  }
  std::vector<KernelSpec> split_specs(const GemmProblem& p) const { return specs(p, true); }
  // f(problem) for every epilogue option of an N x K problem (no bias with raw int32 output).
  template <class F>
  static void each_epilogue_option(int64_t n, int64_t k, F f) {
    for (i8gemm_out o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16, I8GEMM_OUT_F32, I8GEMM_OUT_I32})
      for (int flags = 0; flags < 4; ++flags) {
        const bool bias = flags & 1, asym = flags & 2;
        if (bias && o == I8GEMM_OUT_I32) continue;
        f(make_problem(n, k, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, o, bias, asym));
      }
  }
  struct WidthCase {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  // Every candidate whose bn is one of `widths` over each case's M values (all of `widths` must
  // be offered somewhere), then every epilogue option of an epilogue_n x 4096 problem through
  // one candidate of each of `epilogue_widths`.
  void check_widths(const char* label, const std::vector<WidthCase>& cases, const std::set<int>& widths,
                    int64_t epilogue_n, const std::vector<int>& epilogue_widths) {
    auto of = [&](const i8gemm_problem& p) {
      std::vector<KernelSpec> out;
      for (const KernelSpec& s : specs(to_gemm_problem(p)))
        if (widths.count(s.config.bn)) out.push_back(s);
      return out;
    };
    int runs = 0, exact = 0;
    std::set<int> seen;
    for (const WidthCase& c : cases) {
      const std::vector<KernelSpec> w = of(c.p);
      for (const KernelSpec& s : w) seen.insert(s.config.bn);
      check_all(c.p, w, c.ms, runs, exact);
    }
    EXPECT_EQ(seen, widths);
    each_epilogue_option(epilogue_n, 4096, [&](const i8gemm_problem& p) {
      Expected e = expected(p, 130);
      const std::vector<KernelSpec> w = of(p);
      for (int bn : epilogue_widths) {
        const auto it = std::find_if(w.begin(), w.end(), [&](const KernelSpec& s) { return s.config.bn == bn; });
        ASSERT_NE(it, w.end()) << bn;
        const std::string r = check(p, *it, e);
        EXPECT_TRUE(r.empty()) << it->name() << ": " << r;
        runs += 2;
        exact += r.empty() ? 2 : 0;
      }
    });
    std::printf("[ figure ] wgmma_tma %s tiles: %d of %d launches exact\n", label, exact, runs);
  }
};

TEST_F(WgmmaTma, EveryCandidateIsExactOverTailsAndManyTiles) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(2560, 4096), {1, 17, 128, 300, 2048}},  // 2048 rows: more tiles than SMs
      {make_problem(4096, 384), {64, 1000}},                 // three K tiles
      {make_problem(1000, 4080), {77}},                      // N and K tails
      {make_problem(1001, 4080), {77}},                      // odd N: element stores, no pairs
  };
  int runs = 0, exact = 0;
  for (const Case& c : cases)  // split ones: the test below
    check_all(c.p, specs(to_gemm_problem(c.p), false), c.ms, runs, exact);
  ASSERT_GT(runs, 0);
  std::printf("[ figure ] wgmma_tma: %d of %d candidate launches exact\n", exact, runs);
}

// The packed-weight twins (tune --experimental-packed-weight): each reads the weight packed once on
// the host for its bk (generator/packed_weight.hpp), one bulk copy of the tile's rows a ring
// stage. Exact over N and K tails (N = 1000 and 1001: last tile columns that copy fewer rows than
// bn), an odd K tile count (three: a bk-256 twin's last stage half zeros), K = 400 (the last K
// tile partial), many tiles per block (M = 2048), every epilogue option through one twin, and
// graph replays with new activations.
TEST_F(WgmmaTma, PackedWeightTwinsAreExactOverTailsAndGraphReplays) {
  target_.experimental_packed_weight = true;
  auto packed = [&](const i8gemm_problem& p) {
    std::vector<KernelSpec> out;
    for (const KernelSpec& s : specs(to_gemm_problem(p)))
      if (s.config.packed_weight) out.push_back(s);
    return out;
  };
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(2560, 4096), {1, 17, 64, 300, 2048}},
      {make_problem(4096, 384), {64, 1000}},
      {make_problem(1000, 4080), {77}},
      {make_problem(1001, 400), {33}},
  };
  int runs = 0, exact = 0;
  std::set<int> bks;
  for (const Case& c : cases) {
    const std::vector<KernelSpec> w = packed(c.p);
    ASSERT_FALSE(w.empty()) << describe(c.p);
    for (const KernelSpec& s : w) bks.insert(s.config.bk);
    check_all(c.p, w, c.ms, runs, exact);
  }
  EXPECT_EQ(bks, (std::set<int>{128, 256}));
  each_epilogue_option(1000, 4080, [&](const i8gemm_problem& p) {
    Expected e = expected(p, 130);
    const std::string r = check(p, packed(p).back(), e);
    EXPECT_TRUE(r.empty()) << r;
    runs += 2;
    exact += r.empty() ? 2 : 0;
  });
  int replays = 0, replays_exact = 0;
  for (const KernelSpec& s : packed(make_problem(2560, 4096)))
    if (s.config.bm == 64 && s.config.bn == 64) {  // bk 128 and 256
      replays_exact += graph_replays_exact(s, 64);
      replays += 10;
    }
  EXPECT_EQ(replays, 20);
  std::printf("[ figure ] wgmma_tma packed weight: %d of %d launches exact, %d of %d graph replays\n", exact, runs,
              replays_exact, replays);
}

TEST_F(WgmmaTma, EveryEpilogueOptionIsExact) {
  int runs = 0, exact = 0;
  each_epilogue_option(1000, 4080, [&](const i8gemm_problem& p) {
    Expected e = expected(p, 130);
    const std::string r = check(p, specs(to_gemm_problem(p)).front(), e);
    EXPECT_TRUE(r.empty()) << r;
    runs += 2;
    exact += r.empty() ? 2 : 0;
  });
  const i8gemm_problem tensor = make_problem(1000, 4080, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TENSOR,
                                             I8GEMM_SCALE_PER_TENSOR);
  Expected e = expected(tensor, 130);
  const std::string r = check(tensor, specs(to_gemm_problem(tensor)).back(), e);
  EXPECT_TRUE(r.empty()) << r;
  std::printf("[ figure ] wgmma_tma epilogue options: %d of %d launches exact (+ per-tensor scales: %s)\n", exact,
              runs, r.empty() ? "exact" : "WRONG");
}

// 2x1 clusters (cm2, not yet run on a GPU when written): both blocks of a cluster walk the same
// units, the w tile is loaded half by each and multicast, each stage is released on both
// blocks' empty barriers. Cases: odd tile-row counts (the last unit's rank-1 tile lies past M:
// it computes and stores nothing), one unit only (M <= bm), many units per cluster (M = 8191:
// the ring's phases carry across units), N and K tails, N = 4160 (the last tile column's
// second w half lies wholly past N: its box is clamped), K = 384 (three K tiles, fewer than
// the stages).
TEST_F(WgmmaTma, ClusterConfigsAreExactOverOddTileRowsAndTails) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(2560, 4096), {1, 64, 65, 129, 300, 641, 8191}},
      {make_problem(4160, 4096), {200, 1000}},
      {make_problem(1000, 4080), {77, 333}},
      {make_problem(1001, 4080), {77}},
      {make_problem(4096, 384), {1000}},
  };
  int runs = 0, exact = 0;
  for (const Case& c : cases) {
    std::vector<KernelSpec> clustered;
    for (const KernelSpec& spec : specs(to_gemm_problem(c.p)))
      if (spec.config.cluster_m > 1) clustered.push_back(spec);
    check_all(c.p, clustered, c.ms, runs, exact);
  }
  ASSERT_GT(runs, 0) << "no cm2 candidates";
  std::printf("[ figure ] wgmma_tma cm2: %d of %d launches exact\n", exact, runs);
}

// K pairs (ck2, session 17; offered where K has at least 64 tiles): both blocks of a cluster walk
// the same tiles over the two halves of K; rank 1 hands its sums to rank 0 through shared memory
// (st.async counted on rank 0's barrier), rank 0 stores. Cases: one tile row (M = 1, 64),
// several tiles per cluster (M = 333, 1000: the exchange barriers' phases carry across tiles
// and the ping-pong consumers alternate), N and K tails, odd N with an odd count of K tiles
// (65: halves of 32 and 33).
TEST_F(WgmmaTma, KPairsAreExactOverTailsAndManyTilesPerCluster) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(4096, 14336), {1, 64, 128, 333}},
      {make_problem(1000, 16368), {77, 1000}},
      {make_problem(1001, 8320), {5}},
  };
  int runs = 0, exact = 0;
  std::set<int> schedules;
  for (const Case& c : cases) {
    std::vector<KernelSpec> pairs;
    for (const KernelSpec& spec : specs(to_gemm_problem(c.p)))
      if (spec.config.cluster_k > 1) {
        pairs.push_back(spec);
        schedules.insert(spec.config.schedule);
      }
    check_all(c.p, pairs, c.ms, runs, exact);
  }
  ASSERT_GT(runs, 0) << "no ck2 candidates";
  EXPECT_EQ(schedules, (std::set<int>{1, 2})) << "K pairs of both schedules";
  std::printf("[ figure ] wgmma_tma ck2: %d of %d launches exact\n", exact, runs);
  for (const KernelSpec& spec : specs({4096, 14336}))
    if (spec.config.cluster_k > 1) {
      const int replays = graph_replays_exact(spec, 64);
      EXPECT_EQ(replays, 10) << spec.name();
      std::printf("[ figure ] wgmma_tma %s: %d of 10 graph replays exact\n", spec.name().c_str(), replays);
      break;
    }
}

// The first candidate, a split-K one and a 2x1 cluster config (cuLaunchKernelEx with the cluster
// attribute, captured into the graph as a kernel node with its cluster shape).
TEST_F(WgmmaTma, GraphReplaysWithNewActivationsStayExact) {
  const GemmProblem p{2560, 4096};
  KernelSpec cluster = specs(p).front();
  for (const KernelSpec& s : specs(p))
    if (s.config.cluster_m == 2) cluster = s;
  ASSERT_EQ(cluster.config.cluster_m, 2) << "no cm2 candidate of " << p.key();
  for (const KernelSpec& spec : {specs(p).front(), split_specs(p).front(), cluster}) {
    const int exact = graph_replays_exact(spec, 333);
    std::printf("[ figure ] wgmma_tma %s: %d of 10 graph replays exact\n", spec.name().c_str(), exact);
  }
}

// Split-K: every split candidate over M, N and K tails, M = 1 (one tile row, most slices per
// tile busy) and a grid with more units than SMs (a block walks several units, its ring and the
// ping-pong skips carrying across them); each checked twice in a row and for its counters.
TEST_F(WgmmaTma, SplitKCandidatesAreExactOverTailsAndRepeatedLaunches) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(2560, 4096), {1, 128, 333}},  // 333 rows: 6 tile rows of 64, units > SMs
      {make_problem(1000, 4080), {77, 200}},      // N and K tails
      {make_problem(1001, 4080), {5}},            // odd N
      {make_problem(768, 4096), {64}},            // 8-way splits
  };
  int runs = 0, exact = 0;
  std::set<int> schedules;
  for (const Case& c : cases) {
    const std::vector<KernelSpec> split = split_specs(to_gemm_problem(c.p));
    for (const KernelSpec& spec : split) schedules.insert(spec.config.schedule);
    check_all(c.p, split, c.ms, runs, exact);
  }
  EXPECT_EQ(schedules, (std::set<int>{1, 2})) << "split configs of both schedules";
  std::printf("[ figure ] wgmma_tma split-K: %d of %d candidate launches exact\n", exact, runs);
}

// The dynamic schedule (_ds1, session 33: a block claims its next tile from a counter once its
// first is under way): every twin over grids of 2-6 waves of tiles (the claims race between
// blocks), one tile row, N and K tails; each launch twice (the last block resets the counters:
// checked after each), then ten graph replays with new activations.
TEST_F(WgmmaTma, DynamicScheduleIsExactOverManyWavesTailsAndReplays) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(1024, 1024), {1, 6000}},  // 192 tiles of 256 x 128 at 6000 rows, 188 of 128 x 256
      {make_problem(1000, 4080), {77, 4500}},  // N and K tails; 144 tiles of either
      {make_problem(640, 512), {8191}},        // 160 tiles of 256 x 128, 192 of 128 x 256
  };
  int runs = 0, exact = 0;
  std::set<std::string> shapes;
  for (const Case& c : cases) {
    std::vector<KernelSpec> dynamic;
    for (const KernelSpec& spec : specs(to_gemm_problem(c.p)))
      if (spec.config.dynamic_schedule) {
        dynamic.push_back(spec);
        shapes.insert(fmt::format("{}_{}x{}", spec.config.schedule, spec.config.bm, spec.config.bn));
      }
    check_all(c.p, dynamic, c.ms, runs, exact);
  }
  EXPECT_EQ(shapes.size(), 2u) << "cooperative 128x256 and 256x128";
  std::printf("[ figure ] wgmma_tma dynamic schedule: %d of %d launches exact\n", exact, runs);
  for (const KernelSpec& spec : specs({1024, 1024}))
    if (spec.config.dynamic_schedule && spec.config.bm == 256) {
      const int replays = graph_replays_exact(spec, 6000);
      EXPECT_EQ(replays, 10) << spec.name();
      std::printf("[ figure ] wgmma_tma %s: %d of 10 graph replays exact\n", spec.name().c_str(), replays);
    }
}

// The tile-order twins (tune --experimental-tile-order; session 34: 156 of 156 exact on the H100
// with raster groups of 1 and 16): the raster group of 1, the L2 hints and the ping-pong dynamic schedule, over grids
// of more tiles than SMs along both raster directions (M > N: tile rows grouped; M < N: tile
// columns), N and K tails; then ten graph replays of the ping-pong dynamic twin and of a hinted
// one.
TEST_F(WgmmaTma, TileOrderTwinsAreExactOverTailsAndReplays) {
  target_.experimental_tile_order = true;
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(1000, 4080), {77, 3000}},  // N and K tails; 3000 rows: 192 tiles of 128 x 128
      {make_problem(2048, 512), {1500}},       // M < N: 192 tiles of 128 x 128, grouped by column
  };
  int runs = 0, exact = 0;
  std::set<std::string> seen;
  for (const Case& c : cases) {
    std::vector<KernelSpec> twins;
    for (const KernelSpec& spec : specs(to_gemm_problem(c.p)))
      if (tile_order_twin(spec.config)) {
        twins.push_back(spec);
        seen.insert(spec.name().substr(spec.name().find("_bm")));
      }
    check_all(c.p, twins, c.ms, runs, exact);
  }
  EXPECT_GE(seen.size(), 21u) << "the twins of ping-pong 128x128 (and cm2), cooperative 256x128 (and cm2), 128x256";
  std::printf("[ figure ] wgmma_tma tile-order twins: %d of %d launches exact\n", exact, runs);
  for (const KernelSpec& spec : specs({1024, 1024}))
    if (spec.config.schedule == 2 && spec.config.bm == 128 && spec.config.bn == 128 &&
        (spec.config.dynamic_schedule || spec.config.l2_hint == 3)) {
      const int replays = graph_replays_exact(spec, 6000);
      EXPECT_EQ(replays, 10) << spec.name();
      std::printf("[ figure ] wgmma_tma %s: %d of 10 graph replays exact\n", spec.name().c_str(), replays);
    }
}

// The wide tiles (bn 96, 160 and 192, where the width divides N): every one over M and K tails and
// grids with more tiles than SMs, and every epilogue option through a bn-96 and a bn-160 tile
// (12 and 20 column groups: the epilogue's chunks are an even divisor of them, col_chunk).
TEST_F(WgmmaTma, WideTilesAreExactOverTailsAndEveryEpilogueOption) {
  check_widths("wide",
               {{make_problem(1920, 4080), {1, 77, 1000}},   // all three widths; a K tail
                {make_problem(6144, 4096), {129, 2048}}},    // 192: 32 tile columns, 2048 rows past the SMs
               {96, 160, 192}, 1920, {96, 160});  // 12 and 20 column groups: chunks of 6 or 4, and of 4
}

// The narrow tiles (bn 48 and 80, deep rings, offered where the last tile column wastes at most
// 1/16 of N): every one over M, N and K tails (N = 1000: a partial last column for each
// width) and grids with more tiles than SMs, and every epilogue option through a bn-48 and a
// bn-80 tile (6 and 10 column groups: chunks of 2 or 6 and of 2).
TEST_F(WgmmaTma, NarrowTilesAreExactOverTailsAndEveryEpilogueOption) {
  check_widths("narrow",
               {{make_problem(2560, 4096), {1, 200, 1000}},  // 2560 = 32 x 80: 128 tiles at M = 256
                {make_problem(1000, 4080), {77, 3000}}},     // a partial last tile column; a K tail
               {48, 80}, 1000, {48, 80});
}

// The staged store (epilogue_store = 1, templates/tma_store.cuh; not yet run on a GPU when
// written): the tile through shared memory (stmatrix, 128-byte swizzle) and a TMA store that
// clips rows past M and columns past N. Every staged candidate over both 2-byte outputs with
// and without bias and zero points: over row, column and K tails (1000 x 4080, M = 77), and over
// many tiles per block with a short main loop (1000 x 384, M = 4100: 260 or more tiles for 132
// blocks, so each consumer writes its buffer again while its last store may still read it);
// then an output 2 bytes past a 16-byte boundary, for which the host encodes no output map and
// the kernel stores from registers.
TEST_F(WgmmaTma, StagedStoresAreExactOverEveryTwoByteOptionAndFallBackForAnUnalignedOutput) {
  int runs = 0, exact = 0;
  struct Case {
    i8gemm_problem p;
    int64_t m;
    std::vector<KernelSpec> staged;
  };
  std::vector<Case> cases;
  std::vector<KernelSpec> all;
  for (i8gemm_out o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16})
    for (int flags = 0; flags < 4; ++flags)
      for (const auto& [k, m] : {std::pair<int64_t, int64_t>{4080, 77}, {384, 4100}}) {
        Case c{make_problem(1000, k, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, o,
                            flags & 1, flags & 2),
               m,
               {}};
        for (const KernelSpec& s : specs(to_gemm_problem(c.p)))
          if (s.config.epilogue_store) c.staged.push_back(s);
        // ping-pong 128x128 and 64x256, each with and without cm2; at K = 384 (short K, session 32)
        // also 64x64, 64x128 and 128x64
        ASSERT_EQ(c.staged.size(), k == 384 ? 7u : 4u) << "K = " << k;
        all.insert(all.end(), c.staged.begin(), c.staged.end());
        cases.push_back(std::move(c));
      }
  precompile(all);  // the 88 kernels at once
  for (const Case& c : cases) check_all(c.p, c.staged, {c.m}, runs, exact);
  const i8gemm_problem p = make_problem(1000, 4080);
  Expected e = expected(p, 300);
  Stream s;
  DeviceGemm d(shared_ctx(), p, e.h, s);
  DevBuf shifted(d.out_bytes_count() + 16);
  for (const KernelSpec& spec : specs(to_gemm_problem(p))) {
    if (!spec.config.epilogue_store) continue;
    const KernelInstance k = engine_->instantiate(spec, e.h.m);
    i8gemm_args c = d.args();
    c.m = e.h.m;
    c.out = reinterpret_cast<void*>(shifted.ptr() + 2);
    I8G_CU(cuMemsetD8Async(shifted.ptr(), 0xA5, shifted.bytes(), s.get()));
    k.launch(args_from_c(&c, "test"), s.get());
    s.sync();
    const std::vector<uint8_t> all = shifted.download<uint8_t>(shifted.bytes());
    const auto first = all.begin() + 2, last = first + long(d.out_bytes_count());
    const std::string r = compare_outputs(p, e.h.m, std::vector<uint8_t>(first, last), e.want);
    EXPECT_TRUE(r.empty()) << spec.name() << " with the output at a 2-byte offset: " << r;
    // the bytes either side of the output (2 before, 14 after) keep the fill
    const bool guards = std::all_of(all.begin(), first, [](uint8_t b) { return b == 0xA5; }) &&
                        std::all_of(last, all.end(), [](uint8_t b) { return b == 0xA5; });
    EXPECT_TRUE(guards) << spec.name() << " wrote outside the output at a 2-byte offset";
    ++runs;
    exact += r.empty() && guards ? 1 : 0;
  }
  std::printf("[ figure ] wgmma_tma staged stores: %d of %d launches exact\n", exact, runs);
}

}  // namespace
}  // namespace i8g::gputest
