// compile_all: parallel, outcomes in input order, failures as outcomes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "tests/runtime/runtime_test_support.hpp"

namespace i8g {
namespace {

// Finishes later sources first (sleeps less for higher indices) and fails on "bad*" names.
class ShuffledFakeCompiler : public Compiler {
 public:
  Binary compile(const Source& src, const Target& target) const override {
    int now = ++in_flight_, seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(src.code)));
    --in_flight_;
    if (src.name.rfind("bad", 0) == 0) throw Error("fake", "cannot compile " + src.name);
    Binary b;
    b.name = src.name;
    b.arch = target.arch;
    return b;
  }
  std::string version() const override { return "fake 1.0"; }
  std::vector<std::string> options(const Target&) const override { return {}; }
  mutable std::atomic<int> in_flight_{0}, max_in_flight_{0};
};

TEST(CompileAll, OutcomesFollowInputOrderWhateverFinishesFirst) {
  ShuffledFakeCompiler fake;
  std::vector<Source> srcs;
  for (int i = 0; i < 12; ++i)
    srcs.push_back({(i == 5 ? "bad" : "ok") + std::to_string(i), std::to_string(2 * (12 - i)), "e"});
  std::vector<std::pair<size_t, size_t>> calls;
  auto out = compile_all(fake, srcs, Target::from_arch("sm_80"), 4,
                         [&](size_t done, size_t total) { calls.emplace_back(done, total); });
  ASSERT_EQ(out.size(), srcs.size());
  for (size_t i = 0; i < srcs.size(); ++i) {
    if (i == 5) {
      EXPECT_FALSE(out[i].binary);
      EXPECT_NE(out[i].error.find("cannot compile bad5"), std::string::npos);
    } else {
      ASSERT_TRUE(out[i].binary) << out[i].error;
      EXPECT_EQ(out[i].binary->name, srcs[i].name);
      EXPECT_TRUE(out[i].error.empty());
    }
  }
  ASSERT_EQ(calls.size(), srcs.size());
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i], std::make_pair(i + 1, srcs.size()));
  EXPECT_GT(fake.max_in_flight_.load(), 1);
  EXPECT_LE(fake.max_in_flight_.load(), 4);
}

TEST(CompileAll, EachOutcomeIsHandedOverAsSoonAsItIsDoneOneAtATime) {
  ShuffledFakeCompiler fake;
  std::vector<Source> srcs;
  for (int i = 0; i < 8; ++i) srcs.push_back({(i == 3 ? "bad" : "ok") + std::to_string(i), std::to_string(8 - i), "e"});
  std::vector<size_t> order;
  std::atomic<int> inside{0};
  int overlapped = 0;
  std::vector<std::pair<size_t, size_t>> progress;
  compile_all(
      fake, srcs, Target::from_arch("sm_80"), 4,
      [&](size_t done, size_t) { progress.emplace_back(done, order.size()); },
      [&](size_t i, CompileOutcome& o) {
        overlapped += ++inside > 1;
        order.push_back(i);
        EXPECT_EQ(bool(o.binary), i != 3) << i;
        --inside;
      });
  EXPECT_EQ(overlapped, 0) << "finished runs under the progress lock";
  ASSERT_EQ(order.size(), srcs.size());
  std::vector<size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i) << "each index once";
  for (const auto& [done, handed] : progress) EXPECT_EQ(handed, done) << "finished comes before progress";
}

TEST(CompileAll, EmptyInputGivesNoOutcomes) {
  ShuffledFakeCompiler fake;
  EXPECT_TRUE(compile_all(fake, {}, Target::from_arch("sm_80"), 0).empty());
}

TEST(CompileAll, ThrowingProgressCallbackDoesNotAbort) {
  ShuffledFakeCompiler fake;
  std::vector<Source> srcs = {{"ok0", "1", "e"}, {"ok1", "1", "e"}};
  auto out = compile_all(fake, srcs, Target::from_arch("sm_80"), 2,
                         [](size_t, size_t) { throw std::runtime_error("observer"); });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].binary && out[1].binary);
}

TEST(CompileAll, RealNvrtcSourcesInParallelWithOneFailing) {
  Target t = Target::from_arch("sm_86");
  auto compiler = make_compiler(t);
  std::vector<Source> srcs = {test::dp4a_source(), test::broken_source(), test::plain_source(),
                              test::spill_source()};
  auto out = compile_all(*compiler, srcs, t, 0);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].binary && out[0].binary->lowered_name == "_Z11dp4a_kernelILi1024EEvPKiS1_Pii");
  EXPECT_FALSE(out[1].binary);
  EXPECT_NE(out[1].error.find("undeclared_one"), std::string::npos) << out[1].error;
  EXPECT_TRUE(out[2].binary && out[2].binary->lowered_name == "_Z12plain_kernelPi");
  EXPECT_TRUE(out[3].binary && out[3].binary->name == "test_spill");
}

}  // namespace
}  // namespace i8g
