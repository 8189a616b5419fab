// The shape parsers behind `--shape NxK`, `--shapes FILE` and `--m 1,16,256`: what they accept,
// and that every bad input is an i8g::Error with a readable message (never another exception,
// never a crash), naming the line for a shapes file.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/error.hpp"
#include "tools/shapes.hpp"

namespace i8g {
namespace {

// The message of the Error `f` throws; fails the test when it throws anything else or nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a " << typeid(e).name() << " instead of i8g::Error: " << e.what();
    return {};
  } catch (...) {
    ADD_FAILURE() << "threw something that is not an exception";
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// parse_shape

TEST(ParseShape, ReadsNxK) {
  NamedShape s = parse_shape("2560x4096");
  EXPECT_EQ(s.n, 2560);
  EXPECT_EQ(s.k, 4096);
  EXPECT_TRUE(s.name.empty());
}

TEST(ParseShape, AcceptsCapitalXAndSurroundingSpaces) {
  NamedShape a = parse_shape("768X384");
  EXPECT_EQ(a.n, 768);
  EXPECT_EQ(a.k, 384);
  NamedShape b = parse_shape("  16 x 32\t");
  EXPECT_EQ(b.n, 16);
  EXPECT_EQ(b.k, 32);
}

TEST(ParseShape, SmallestAndLargestDigitCounts) {
  NamedShape one = parse_shape("1x1");
  EXPECT_EQ(one.n, 1);
  EXPECT_EQ(one.k, 1);
  NamedShape big = parse_shape("999999999x999999999");  // nine digits: parsed; limits are the problem's
  EXPECT_EQ(big.n, 999999999);
  EXPECT_EQ(big.k, 999999999);
}

TEST(ParseShape, ZeroIsRefused) {
  EXPECT_TRUE(contains(error_of([] { parse_shape("0x4096"); }), "positive"));
  EXPECT_TRUE(contains(error_of([] { parse_shape("4096x0"); }), "positive"));
  EXPECT_TRUE(contains(error_of([] { parse_shape("000x000"); }), "positive"));
}

TEST(ParseShape, NegativeIsRefused) {
  EXPECT_TRUE(contains(error_of([] { parse_shape("-1x4"); }), "not a shape"));
  EXPECT_TRUE(contains(error_of([] { parse_shape("4x-1"); }), "not a shape"));
  EXPECT_TRUE(contains(error_of([] { parse_shape("+4x4"); }), "not a shape"));
}

TEST(ParseShape, HugeNumbersAreAnErrorNotAnOverflow) {
  EXPECT_TRUE(contains(error_of([] { parse_shape("1234567890x4096"); }), "not a shape"));
  EXPECT_TRUE(contains(error_of([] { parse_shape("4096x99999999999999999999999999"); }), "not a shape"));
  EXPECT_TRUE(contains(error_of([] { parse_shape("18446744073709551617x1"); }), "not a shape"));
  // A very long input is refused, and the message does not echo all of it.
  const std::string longer(10000, '9');
  const std::string msg = error_of([&] { parse_shape(longer + "x4"); });
  EXPECT_TRUE(contains(msg, "not a shape"));
  EXPECT_LT(msg.size(), 400u);
}

TEST(ParseShape, GarbageIsRefused) {
  for (const std::string& bad : std::vector<std::string>{"", " ", "abc", "x", "4096", "4096x", "x4096", "4096x4096x2", "4096*4096", "4096 4096",
        "4096,4096", "0x10x20", "1.5x4", "4e3x4", "0x1Fx4", "\xff\xfe\xfd",
        "8x8\n9x9", "\xd9\xa3x4" /* Arabic-Indic digit three */}) {
    const std::string msg = error_of([&] { parse_shape(bad); });
    EXPECT_FALSE(msg.empty()) << "accepted '" << bad << "'";
    EXPECT_TRUE(contains(msg, "NxK") || contains(msg, "not a shape")) << msg;
  }
}

TEST(ParseShape, NulByteIsRefused) {
  // what() stops at the NUL that the message echoes; it is still an Error about a shape.
  EXPECT_TRUE(contains(error_of([] { parse_shape(std::string("8\0x8", 4)); }), "shape"));
}

TEST(ParseShape, ErrorNamesTheInput) {
  EXPECT_TRUE(contains(error_of([] { parse_shape("abc"); }), "'abc'"));
}

// ---------------------------------------------------------------------------------------------
// parse_shapes_file

TEST(ParseShapesFile, NamedAndUnnamedLines) {
  auto v = parse_shapes_file("qkv_proj 2560x4096\n4096x2048\nshared.down-1   4096x384\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "qkv_proj");
  EXPECT_EQ(v[0].n, 2560);
  EXPECT_EQ(v[0].k, 4096);
  EXPECT_EQ(v[1].name, "");
  EXPECT_EQ(v[1].n, 4096);
  EXPECT_EQ(v[1].k, 2048);
  EXPECT_EQ(v[2].name, "shared.down-1");
  EXPECT_EQ(v[2].n, 4096);
  EXPECT_EQ(v[2].k, 384);
}

TEST(ParseShapesFile, CommentsBlankLinesAndWhitespace) {
  const std::string text =
      "# a header comment\n"
      "\n"
      "   \t  \n"
      "  o_proj\t4096x2048   # trailing comment\n"
      "#only a comment 1x1\n"
      "\tdown 4096x384\t\n"
      "   # indented comment\n";
  auto v = parse_shapes_file(text);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "o_proj");
  EXPECT_EQ(v[0].n, 4096);
  EXPECT_EQ(v[0].k, 2048);
  EXPECT_EQ(v[1].name, "down");
  EXPECT_EQ(v[1].k, 384);
}

TEST(ParseShapesFile, CrlfLineEndingsAndNoFinalNewline) {
  auto v = parse_shapes_file("a 8x16\r\n\r\nb 32x64");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "a");
  EXPECT_EQ(v[0].k, 16);
  EXPECT_EQ(v[1].name, "b");
  EXPECT_EQ(v[1].n, 32);
  EXPECT_EQ(v[1].k, 64);
}

TEST(ParseShapesFile, KeepsOrderAndDuplicates) {
  auto v = parse_shapes_file("b 2x2\na 1x1\nb 2x2\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "b");
  EXPECT_EQ(v[1].name, "a");
  EXPECT_EQ(v[2].name, "b");
}

TEST(ParseShapesFile, ShippedExampleFilesParse) {
  // The same text as examples/tp4.shapes.
  auto v = parse_shapes_file(
      "# Seed TP4 set (weight N x K)\nqkv_proj       2560x4096\no_proj         4096x2048\n"
      "shared_gate_up 768x4096\nshared_down    4096x384\n");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[3].name, "shared_down");
  EXPECT_EQ(v[3].n, 4096);
  EXPECT_EQ(v[3].k, 384);
}

TEST(ParseShapesFile, EmptyFileIsAnError) {
  EXPECT_TRUE(contains(error_of([] { parse_shapes_file(""); }), "no shapes"));
}

TEST(ParseShapesFile, OnlyCommentsAndBlanksIsAnError) {
  EXPECT_TRUE(contains(error_of([] { parse_shapes_file("# nothing\n\n   \n# 1x1\n"); }), "no shapes"));
}

TEST(ParseShapesFile, BadShapeNamesItsLine) {
  const std::string msg = error_of([] { parse_shapes_file("# c\na 8x8\n\nb 9y9\nc 1x1\n"); });
  EXPECT_TRUE(contains(msg, "line 4")) << msg;
  EXPECT_TRUE(contains(msg, "9y9")) << msg;
}

TEST(ParseShapesFile, LineNumbersCountCommentsBlanksAndCrlf) {
  const std::string msg = error_of([] { parse_shapes_file("\r\n# x\r\n\r\na 1x1\r\nb 0x4\r\n"); });
  EXPECT_TRUE(contains(msg, "line 5")) << msg;
  EXPECT_TRUE(contains(msg, "positive")) << msg;
}

TEST(ParseShapesFile, BadLinesOfEveryKindNameTheirLine) {
  const std::vector<std::string> bad_lines = {
      "a 8x8 extra",          // three fields
      "two words 8x8",        // a name with a space
      "1abc 8x8",             // a name starting with a digit
      "a -8x8",               // negative
      "a 0x8",                // zero
      "a 8x0",                // zero
      "a 12345678901x8",      // too many digits
      "a 8x99999999999999999999999",
      "8x8 a",                // name after the shape
      "a\xff\xfe 8x8",        // garbage bytes in the name
      "\xff\xfe\xfd\xfc",     // garbage bytes only
      "a 8x8\xff",            // garbage after the shape
      std::string("a 8\0x8", 6),  // a NUL byte
      "a 8,8",
      "name:8x8",
      std::string(300, 'a') + " 8x8",   // an over-long line
      std::string(80, 'n') + " 8x8",    // an over-long name (64 characters at most)
  };
  for (const std::string& line : bad_lines) {
    const std::string text = "ok 16x16\n# comment\n" + line + "\nlater 32x32\n";
    const std::string msg = error_of([&] { parse_shapes_file(text); });
    EXPECT_TRUE(contains(msg, "line 3")) << "line '" << line << "': " << msg;
    EXPECT_LT(msg.size(), 400u) << "the message should stay one readable line";
  }
}

TEST(ParseShapesFile, FirstBadLineIsReported) {
  const std::string msg = error_of([] { parse_shapes_file("a 1x1\nbad\nworse x\n"); });
  EXPECT_TRUE(contains(msg, "line 2")) << msg;
  EXPECT_FALSE(contains(msg, "line 3")) << msg;
}

TEST(ParseShapesFile, LongestNameIsAccepted) {
  const std::string name = "n" + std::string(63, 'x');  // 64 characters
  auto v = parse_shapes_file(name + " 8x8\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, name);
}

TEST(ParseShapesFile, RandomBytesNeverCrash) {
  // A fixed pseudo-random byte soup: whatever it is, the answer is shapes or an Error.
  uint32_t x = 0x12345678;
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const int len = 1 + round * 7 % 500;
    for (int i = 0; i < len; ++i) {
      x = x * 1664525u + 1013904223u;
      text.push_back(char(x >> 24));
    }
    try {
      parse_shapes_file(text);
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": not an i8g::Error: " << e.what();
    }
  }
}

TEST(ParseShapesFile, ManyLines) {
  std::string text;
  for (int i = 1; i <= 5000; ++i) text += "s" + std::to_string(i) + " " + std::to_string(i) + "x" + std::to_string(2 * i) + "\n";
  auto v = parse_shapes_file(text);
  ASSERT_EQ(v.size(), 5000u);
  EXPECT_EQ(v[4999].name, "s5000");
  EXPECT_EQ(v[4999].k, 10000);
  const std::string msg = error_of([&] { parse_shapes_file(text + "broken\n"); });
  EXPECT_TRUE(contains(msg, "line 5001")) << msg;
}

// ---------------------------------------------------------------------------------------------
// parse_m_list

TEST(ParseMList, ReadsCommaSeparatedValues) {
  EXPECT_EQ(parse_m_list("1,16,256"), (std::vector<int64_t>{1, 16, 256}));
  EXPECT_EQ(parse_m_list("8"), (std::vector<int64_t>{8}));
  EXPECT_EQ(parse_m_list(" 1 , 2 "), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(parse_m_list("999999999"), (std::vector<int64_t>{999999999}));
}

TEST(ParseMList, BadListsAreErrors) {
  for (const std::string& bad : std::vector<std::string>{"", "0", "-1", "1,,2", "1,0", "a", "1;2", "1.5", "1234567890",
                                "99999999999999999999999", "\xff", "1 2"}) {
    const std::string msg = error_of([&] { parse_m_list(bad); });
    EXPECT_FALSE(msg.empty()) << "accepted '" << bad << "'";
  }
  EXPECT_TRUE(contains(error_of([] { parse_m_list("1,x,3"); }), "'x'"));
}

// Found by running fuzz/fuzz_shapes on a hand-made 200 KB input (libFuzzer's own inputs stop at
// 4 KiB): libstdc++'s regex recursed once per character and overflowed the stack.
TEST(ParseMList, VeryLongItemIsAnErrorNotAStackOverflow) {
  EXPECT_THROW(parse_m_list(std::string(200000, ' ') + "1"), Error);
  EXPECT_THROW(parse_m_list("1," + std::string(200000, '7')), Error);
  EXPECT_EQ(parse_m_list(std::string(40, ' ') + "1"), (std::vector<int64_t>{1}));
}

}  // namespace
}  // namespace i8g
