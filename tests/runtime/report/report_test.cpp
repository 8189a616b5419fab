// make_report: the ptxas log (parsed here independently by regex) and the CUBIN agree;
// spills show in both; JSON round-trips; text is readable.
#include <gtest/gtest.h>

#include <climits>
#include <regex>

#include "runtime/report/report.hpp"
#include "tests/runtime/runtime_test_support.hpp"

namespace i8g {
namespace {

struct LogFacts {
  int regs = -1, smem = 0, barriers = -1, stack = -1, stores = -1, loads = -1;
};

// An independent reading of ptxas's lines for `sym`, to check the parser against.
LogFacts facts_by_regex(const std::string& log, const std::string& sym) {
  LogFacts f;
  std::smatch m;
  const std::string esc = std::regex_replace(sym, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)");
  std::regex block("Function properties for " + esc +
                   R"(\n[^\n]*?(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads\n)"
                   R"([^\n]*Used (\d+) registers([^\n]*))");
  if (!std::regex_search(log, m, block)) return f;
  f.stack = std::stoi(m[1]);
  f.stores = std::stoi(m[2]);
  f.loads = std::stoi(m[3]);
  f.regs = std::stoi(m[4]);
  const std::string rest = m[5];
  std::smatch n;
  if (std::regex_search(rest, n, std::regex(R"(used (\d+) barriers)"))) f.barriers = std::stoi(n[1]);
  if (std::regex_search(rest, n, std::regex(R"((\d+) bytes smem)"))) f.smem = std::stoi(n[1]);
  return f;
}

class ReportPerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportPerArch, FieldsEqualPtxasLinesAndAgreeWithTheCubin) {
  const std::string arch = GetParam();
  const Binary& b = test::compiled(test::dp4a_source(), arch);
  ResourceReport r = make_report(b, Target::from_arch(arch), 256, 0);
  LogFacts f = facts_by_regex(b.log, b.lowered_name);
  ASSERT_GT(f.regs, 0) << b.log;
  EXPECT_EQ(r.symbol, b.lowered_name);
  EXPECT_EQ(r.registers, f.regs);
  EXPECT_EQ(r.static_smem_bytes, f.smem);
  EXPECT_EQ(r.static_smem_bytes, 4096);
  EXPECT_EQ(r.barriers, f.barriers);
  EXPECT_EQ(r.barriers, 1);
  EXPECT_EQ(r.stack_frame_bytes, f.stack);
  EXPECT_EQ(r.spill_store_bytes, f.stores);
  EXPECT_EQ(r.spill_load_bytes, f.loads);
  EXPECT_EQ(r.elf_registers, r.registers);
  EXPECT_EQ(r.elf_stack_frame_bytes, r.stack_frame_bytes);
  EXPECT_EQ(r.elf_static_smem_bytes, r.static_smem_bytes);
  EXPECT_TRUE(r.consistent) << r.to_text();
  if (Target::from_arch(arch).sm >= 90) EXPECT_EQ(r.cmem0_bytes, -1);  // not printed on sm_90+
  else EXPECT_GT(r.cmem0_bytes, 0);
  EXPECT_GT(r.blocks_per_sm, 0);
  EXPECT_GT(r.occupancy, 0);
  EXPECT_LE(r.occupancy, 1.0);
  EXPECT_FALSE(r.occupancy_limiter.empty());
}

TEST_P(ReportPerArch, SpillingKernelShowsStackAndSpillsInLogAndCubin) {
  const std::string arch = GetParam();
  const Binary& b = test::compiled(test::spill_source(), arch);
  ResourceReport r = make_report(b, Target::from_arch(arch), 128, 0);
  LogFacts f = facts_by_regex(b.log, b.lowered_name);
  EXPECT_EQ(r.registers, 32);
  EXPECT_GT(r.stack_frame_bytes, 0);
  EXPECT_GT(r.spill_store_bytes, 0);
  EXPECT_GT(r.spill_load_bytes, 0);
  EXPECT_EQ(r.stack_frame_bytes, f.stack);
  EXPECT_EQ(r.spill_store_bytes, f.stores);
  EXPECT_EQ(r.spill_load_bytes, f.loads);
  EXPECT_EQ(r.elf_stack_frame_bytes, r.stack_frame_bytes);
  EXPECT_EQ(r.static_smem_bytes, 0);
  EXPECT_EQ(r.elf_static_smem_bytes, 0);
  EXPECT_TRUE(r.consistent) << r.to_text();
}

INSTANTIATE_TEST_SUITE_P(Archs, ReportPerArch,
                         ::testing::Values("sm_75", "sm_80", "sm_86", "sm_89", "sm_90a"));

TEST(Report, OccupancyUsesTheKernelsRegistersAndDynamicSmem) {
  const Binary& b = test::compiled(test::dp4a_source(), "sm_90a");
  Target t = Target::from_arch("sm_90a");
  ResourceReport r = make_report(b, t, 256, 100 * 1024);
  std::string why;
  EXPECT_EQ(r.blocks_per_sm, estimate_blocks_per_sm(t, r.registers, 256, 4096 + 100 * 1024, &why, 1));
  EXPECT_EQ(r.blocks_per_sm, 2);
  EXPECT_EQ(r.occupancy_limiter, "shared memory");
  EXPECT_DOUBLE_EQ(r.occupancy, 2 * 8 / 64.0);
}

TEST(Report, MismatchBetweenLogAndCubinIsNamedInNotes) {
  Binary b = test::compiled(test::dp4a_source(), "sm_80");
  const std::string needle = "Used " + std::to_string(make_report(b, Target::from_arch("sm_80"), 256, 0).registers) + " registers";
  b.log.replace(b.log.find(needle), needle.size(), "Used 200 registers");
  ResourceReport r = make_report(b, Target::from_arch("sm_80"), 256, 0);
  EXPECT_FALSE(r.consistent);
  bool named = false;
  for (const auto& n : r.notes) named |= n.find("registers") != std::string::npos && n.find("200") != std::string::npos;
  EXPECT_TRUE(named) << r.to_text();
}

// A log without the kernel's ptxas lines (seen on the H200 for a utility module a prepare
// compiled): registers, stack and static smem come from the CUBIN and the notes say so; spills
// stay unknown.
TEST(Report, ALogWithoutTheKernelsLinesTakesTheCubinsFigures) {
  Binary b = test::compiled(test::dp4a_source(), "sm_90a");
  const Target t = Target::from_arch("sm_90a");
  const ResourceReport with_log = make_report(b, t, 256, 0);
  ASSERT_GT(with_log.registers, 0);
  b.log.clear();
  const ResourceReport r = make_report(b, t, 256, 0);
  EXPECT_EQ(r.registers, with_log.elf_registers);
  EXPECT_EQ(r.stack_frame_bytes, with_log.elf_stack_frame_bytes);
  EXPECT_EQ(r.static_smem_bytes, with_log.elf_static_smem_bytes);
  EXPECT_EQ(r.spill_store_bytes, -1);
  EXPECT_EQ(r.blocks_per_sm, with_log.blocks_per_sm);
  bool said = false;
  for (const auto& n : r.notes) said |= n.find("from the CUBIN") != std::string::npos;
  EXPECT_TRUE(said) << r.to_text();
}

TEST(Report, UnreadableCubinAndEmptyLogAreNotesNotExceptions) {
  Binary b = test::compiled(test::plain_source(), "sm_80");
  b.image.resize(100);
  b.log.clear();
  ResourceReport r = make_report(b, Target::from_arch("sm_80"), 128, 0);
  EXPECT_FALSE(r.consistent);
  EXPECT_EQ(r.registers, -1);
  EXPECT_EQ(r.elf_registers, -1);
  EXPECT_GE(r.notes.size(), 2u);
  EXPECT_FALSE(r.sass_available);
}

TEST(Report, JsonRoundTripsEveryField) {
  ResourceReport r = make_report(test::compiled(test::spill_source(), "sm_86"), Target::from_arch("sm_86"), 128, 512);
  r.notes.push_back("extra note");
  ResourceReport back = ResourceReport::from_json(nlohmann::json::parse(r.to_json().dump()));
  EXPECT_EQ(back, r);
  EXPECT_EQ(back.spill_store_bytes, r.spill_store_bytes);
  EXPECT_EQ(back.instruction_mix, r.instruction_mix);
  EXPECT_THROW(ResourceReport::from_json(nlohmann::json{{"symbol", "x"}}), Error);
}

// Found with fuzz/fuzz_report (its seed with one field set to 1e300): a JSON number that does not
// fit an int (a corrupt cache row) was cast to int inside nlohmann, undefined behaviour; now it
// is an Error.
TEST(Report, OutOfRangeOrFractionalNumbersInJsonAreErrorsNotCasts) {
  ResourceReport r;
  r.symbol = "k";
  const nlohmann::json good = r.to_json();
  EXPECT_NO_THROW(ResourceReport::from_json(good));
  for (const nlohmann::json& bad : {nlohmann::json(1e300), nlohmann::json(-1e40), nlohmann::json(2.5),
                                    nlohmann::json(int64_t(1) << 40), nlohmann::json(uint64_t(1) << 63),
                                    nlohmann::json("12")}) {
    nlohmann::json j = good;
    j["registers"] = bad;
    EXPECT_THROW(ResourceReport::from_json(j), Error) << bad.dump();
    j = good;
    j["instruction_mix"] = {{"IMAD", bad}};
    EXPECT_THROW(ResourceReport::from_json(j), Error) << bad.dump();
  }
  nlohmann::json j = good;
  j["registers"] = INT_MIN;
  EXPECT_EQ(ResourceReport::from_json(j).registers, INT_MIN);
}

TEST(Report, TextNamesTheKernelItsResourcesAndOccupancy) {
  ResourceReport r = make_report(test::compiled(test::spill_source(), "sm_90a"), Target::from_arch("sm_90a"), 128, 0);
  const std::string text = r.to_text();
  EXPECT_NE(text.find(r.symbol), std::string::npos);
  EXPECT_NE(text.find("registers     32"), std::string::npos) << text;
  EXPECT_NE(text.find("spills " + std::to_string(r.spill_store_bytes)), std::string::npos) << text;
  EXPECT_NE(text.find("blocks/SM"), std::string::npos) << text;
}

}  // namespace
}  // namespace i8g
