// The problem enums' tables: one row per enumerator with distinct encodings, the C ABI's
// constants and the templates' codes as the headers define them, every conversion round-trips,
// and the dequant flag word keeps the bit layout templates/i8g_codes.h documents.
#include <gtest/gtest.h>

#include <set>

#include "generator/generator.hpp"
#include "generator/problem_enums.hpp"

using namespace i8g;

namespace {

template <class E>
void expect_a_complete_table(std::initializer_list<E> all) {
  std::set<std::string> keys, clis;
  std::set<int> cs, devices;
  for (E v : all) {
    const EnumRow<E>& r = row_of(v);
    EXPECT_EQ(r.value, v);
    EXPECT_TRUE(keys.insert(r.key).second) << r.key;
    EXPECT_TRUE(clis.insert(r.cli).second) << r.cli;
    EXPECT_TRUE(cs.insert(r.c_value).second) << r.key;
    EXPECT_TRUE(devices.insert(r.device).second) << r.key;
    EXPECT_EQ(from_key<E>(r.key), v);
    EXPECT_EQ(from_cli<E>(r.cli), v);
    EXPECT_EQ(from_c_value<E>(r.c_value), v);
  }
  EXPECT_EQ(std::size(EnumTable<E>::rows), all.size()) << "one row per enumerator";
  EXPECT_EQ(cli_choices<E>().size(), all.size());
  EXPECT_FALSE(from_key<E>("x"));
  EXPECT_FALSE(from_cli<E>(""));
  EXPECT_FALSE(from_c_value<E>(-1));
  EXPECT_FALSE(from_c_value<E>(99));
}

}  // namespace

TEST(ProblemEnums, EveryEnumeratorHasOneRowWithDistinctEncodings) {
  expect_a_complete_table({WeightLayout::nk, WeightLayout::kn});
  expect_a_complete_table({ActScale::per_tensor, ActScale::per_token});
  expect_a_complete_table({WeightScale::per_tensor, WeightScale::per_channel});
  expect_a_complete_table({OutType::bf16, OutType::f16, OutType::f32, OutType::i32});
}

TEST(ProblemEnums, EncodingsAreTheOnesKeysTheCliTheCAbiAndTheTemplatesUse) {
  EXPECT_STREQ(to_string(WeightLayout::kn), "kn");
  EXPECT_STREQ(to_string(ActScale::per_token), "tok");
  EXPECT_STREQ(to_string(WeightScale::per_channel), "ch");
  EXPECT_STREQ(to_string(WeightScale::per_tensor), "tens");
  EXPECT_STREQ(cli_text(ActScale::per_token), "token");
  EXPECT_STREQ(cli_text(WeightScale::per_channel), "channel");
  EXPECT_STREQ(cli_text(OutType::f16), "f16");
  EXPECT_EQ(c_value(WeightLayout::kn), I8GEMM_WEIGHT_KN);
  EXPECT_EQ(c_value(ActScale::per_token), I8GEMM_SCALE_PER_TOKEN);
  EXPECT_EQ(c_value(WeightScale::per_channel), I8GEMM_SCALE_PER_CHANNEL);
  EXPECT_EQ(c_value(WeightScale::per_tensor), I8GEMM_SCALE_PER_TENSOR);
  EXPECT_EQ(c_value(OutType::i32), I8GEMM_OUT_I32);
  EXPECT_EQ(device_code(WeightLayout::kn), kLayoutKN);
  EXPECT_EQ(device_code(ActScale::per_token), kActPerToken);
  EXPECT_EQ(device_code(WeightScale::per_channel), kWeightPerChannel);
  EXPECT_EQ(device_code(OutType::f32), kOutF32);
  EXPECT_EQ(device_code(OutType::i32), kOutI32);
  EXPECT_EQ(out_element_size(OutType::bf16), 2u);
  EXPECT_EQ(out_element_size(OutType::f16), 2u);
  EXPECT_EQ(out_element_size(OutType::f32), 4u);
  EXPECT_EQ(out_element_size(OutType::i32), 4u);
  EXPECT_EQ(parse_out_type("bf16"), OutType::bf16);
  EXPECT_FALSE(parse_out_type("bf17"));
}

TEST(DequantEntry, NamesOutputTypeBiasAndAsymmetry) {
  GemmProblem p{64, 64};  // per token, per channel, bf16
  EXPECT_EQ(dequant_entry(p), "i8g_dequant_tok_ch_bf16");
  p.bias = true;
  EXPECT_EQ(dequant_entry(p), "i8g_dequant_tok_ch_bf16_bias");
  p.asymmetric = true;
  p.out = OutType::f32;
  EXPECT_EQ(dequant_entry(p), "i8g_dequant_tok_ch_f32_bias_asym");
  EXPECT_EQ(dequant_any_entry(p), "i8g_dequant_any_f32_bias_asym") << "the element kernel takes the scales as arguments";
  GemmProblem q{64, 64, WeightLayout::kn, ActScale::per_tensor, WeightScale::per_tensor, OutType::i32};
  q.asymmetric = true;
  EXPECT_EQ(dequant_entry(q), "i8g_dequant_tens_tens_i32_asym") << "the layout does not choose the entry";
}
