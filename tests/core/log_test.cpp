// The library's log: levels parse from names and digits, the level filters, a sink receives
// the messages instead of stderr, quiet drops everything.
#include "core/log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace i8g {
namespace {

struct Captured {
  std::vector<std::pair<int, std::string>> lines;
};

void capture(int level, const char* message, void* user) {
  static_cast<Captured*>(user)->lines.emplace_back(level, message);
}

// Restores the process-wide level and sink after each test.
class Log : public ::testing::Test {
 protected:
  void SetUp() override { before_ = log_level(); }
  void TearDown() override {
    set_log_sink(nullptr, nullptr);
    set_log_level(before_);
  }
  LogLevel before_ = LogLevel::warning;
};

TEST_F(Log, LevelsParseFromNamesAndDigits) {
  EXPECT_EQ(parse_log_level("quiet"), LogLevel::quiet);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::warning);
  EXPECT_EQ(parse_log_level("4"), LogLevel::debug);
  EXPECT_EQ(parse_log_level("0"), LogLevel::quiet);
  EXPECT_FALSE(parse_log_level("5"));
  EXPECT_FALSE(parse_log_level("Warning"));
  EXPECT_FALSE(parse_log_level(""));
  EXPECT_FALSE(parse_log_level("-1"));
}

TEST_F(Log, TheLevelFiltersAndTheSinkReceivesWithoutPrefix) {
  Captured got;
  set_log_sink(capture, &got);
  set_log_level(LogLevel::warning);
  log_warning("cache is read-only");
  log_info("compiling k1");
  log(LogLevel::error, "broken");
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0], std::make_pair(int(LogLevel::warning), std::string("cache is read-only")));
  EXPECT_EQ(got.lines[1], std::make_pair(int(LogLevel::error), std::string("broken")));
  set_log_level(LogLevel::info);
  log_info("compiling k2");
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[2].second, "compiling k2");
}

TEST_F(Log, QuietDropsEverythingAndAQuietMessageIsNeverShown) {
  Captured got;
  set_log_sink(capture, &got);
  set_log_level(LogLevel::quiet);
  log(LogLevel::error, "x");
  log_warning("y");
  set_log_level(LogLevel::debug);
  log(LogLevel::quiet, "never");
  EXPECT_TRUE(got.lines.empty());
}

TEST_F(Log, WithoutASinkMessagesGoToStderrWithTheLevel) {
  set_log_level(LogLevel::warning);
  ::testing::internal::CaptureStderr();
  log_warning("the cache is read-only");
  log_info("not shown");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "i8gemm: warning: the cache is read-only\n");
}

}  // namespace
}  // namespace i8g
