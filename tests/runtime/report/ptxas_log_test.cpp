// ptxas -v log parser: fields per function, missing fields, never crashes on garbage.
#include <gtest/gtest.h>

#include <random>

#include "runtime/report/ptxas_log.hpp"
#include "tests/runtime/runtime_test_support.hpp"

namespace i8g {
namespace {

const char* kSm80Log =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z1kPi' for 'sm_80'\n"
    "ptxas info    : Function properties for _Z1kPi\n"
    "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]\n"
    "ptxas info    : Compile time = 2.403 ms\n"
    "ptxas info    : Function properties for _Z6helperv\n"
    "ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Compiling entry function '_Z1qPi' for 'sm_80'\n"
    "ptxas info    : Function properties for _Z1qPi\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n";

TEST(PtxasLog, ParsesEveryFieldOfEachEntryFunction) {
  auto fns = parse_ptxas_log(kSm80Log);
  ASSERT_EQ(fns.count("_Z1kPi"), 1u);
  const PtxasFunction& k = fns.at("_Z1kPi");
  EXPECT_TRUE(k.entry);
  EXPECT_EQ(k.arch, "sm_80");
  EXPECT_EQ(k.stack_frame_bytes, 16);
  EXPECT_EQ(k.spill_store_bytes, 8);
  EXPECT_EQ(k.spill_load_bytes, 12);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.barriers, 1);
  EXPECT_EQ(k.smem_bytes, 4096);
  EXPECT_EQ(k.cmem0_bytes, 380);
}

TEST(PtxasLog, AbsentFieldsStayUnset) {
  auto fns = parse_ptxas_log(kSm80Log);
  const PtxasFunction& q = fns.at("_Z1qPi");
  EXPECT_EQ(q.registers, 8);
  EXPECT_EQ(q.barriers, 0);
  EXPECT_EQ(q.smem_bytes, -1);  // ptxas omits "0 bytes smem"
  EXPECT_EQ(q.cmem0_bytes, 360);
  auto sm90 = parse_ptxas_log(
      "ptxas info    : Compiling entry function '_Z1kPi' for 'sm_90a'\n"
      "ptxas info    : Used 18 registers, 2048 bytes cumulative stack size\n");
  EXPECT_EQ(sm90.at("_Z1kPi").registers, 18);
  EXPECT_EQ(sm90.at("_Z1kPi").barriers, -1);
  EXPECT_EQ(sm90.at("_Z1kPi").cmem0_bytes, -1);
  EXPECT_EQ(sm90.at("_Z1kPi").stack_frame_bytes, -1);
  EXPECT_EQ(sm90.at("_Z1kPi").cumulative_stack_bytes, 2048);
}

TEST(PtxasLog, DeviceFunctionsAreKeptApartFromEntries) {
  auto fns = parse_ptxas_log(kSm80Log);
  ASSERT_EQ(fns.count("_Z6helperv"), 1u);
  EXPECT_FALSE(fns.at("_Z6helperv").entry);
  EXPECT_EQ(fns.at("_Z6helperv").stack_frame_bytes, 32);
  EXPECT_EQ(fns.at("_Z1kPi").stack_frame_bytes, 16);
}

TEST(PtxasLog, EveryPrefixOfARealLogParsesWithoutCrashing) {
  const std::string log = test::compiled(test::spill_source(), "sm_90a").log + kSm80Log;
  for (size_t n = 0; n <= log.size(); ++n) parse_ptxas_log(log.substr(0, n));
  auto full = parse_ptxas_log(log);
  EXPECT_GT(full.at("_Z12spill_kernelPKiPi").spill_store_bytes, 0);
}

TEST(PtxasLog, GarbageNeverCrashes) {
  std::mt19937 rng(42);
  const std::string alphabet = "ptxas info:.,' \n0123456789Used registers bytes smem cmem[0]\r\t\x01\xff";
  for (int round = 0; round < 2000; ++round) {
    std::string s(rng() % 300, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    parse_ptxas_log(s);
  }
  auto odd = parse_ptxas_log(
      "ptxas info    : Compiling entry function '\n"
      "ptxas info    : Used 99999999999999999999 registers\n"
      "ptxas info    : Function properties for \n"
      "ptxas         .     bytes stack frame, x bytes spill stores,, ,\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Used 2147483647999 registers, used barriers, -4 bytes smem\n");
  EXPECT_EQ(odd.at("k").registers, 2147483647);  // clamped, not overflowed
  EXPECT_EQ(odd.at("k").barriers, -1);
  EXPECT_EQ(odd.at("k").smem_bytes, -1);
}

}  // namespace
}  // namespace i8g
