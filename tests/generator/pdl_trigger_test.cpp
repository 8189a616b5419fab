// The programmatic-launch trigger (KernelConfig::pdl_trigger, "_tr1" / "_tr2"; docs/pdl.md):
// which configs get trigger twins, what the emitted source asks of the template, why a bad one is
// refused, and that neither the candidate list nor the untuned default carries one (the tuner
// races the twins of its finalists only).
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

const Target kHopper = Target::from_arch("sm_90a");
const GemmProblem kProblem{28672, 4096};

TEST(PdlTrigger, DecodeAndWgmmaTmaConfigsGetTwoTwinsThatNameAndParseBack) {
  int decode = 0, tma = 0;
  for (const KernelConfig& c : candidates(kProblem, kHopper)) {
    const std::vector<KernelConfig> twins = trigger_twins(kProblem, c, kHopper);
    if (c.family != Family::decode_mma && c.family != Family::wgmma_tma) {
      EXPECT_TRUE(twins.empty()) << to_string(c.family) << " takes no trigger";
      continue;
    }
    (c.family == Family::decode_mma ? decode : tma)++;
    ASSERT_EQ(twins.size(), 2u) << KernelSpec{kProblem, c, kHopper.arch}.name();
    for (int i = 0; i < 2; ++i) {
      const KernelConfig& v = twins[size_t(i)];
      EXPECT_EQ(v.pdl_trigger, i + 1);
      KernelConfig back = v;
      back.pdl_trigger = 0;
      EXPECT_EQ(back, c) << "a twin differs only in its trigger";
      const KernelSpec s{kProblem, v, kHopper.arch};
      const std::string name = s.name();
      const std::string plain = KernelSpec{kProblem, c, kHopper.arch}.name();
      EXPECT_EQ(name, plain + "_tr" + std::to_string(i + 1));
      EXPECT_EQ(KernelSpec::parse_name(name), s);
      EXPECT_TRUE(invalid_reason(kProblem, v, kHopper).empty()) << name;
      EXPECT_TRUE(trigger_twins(kProblem, v, kHopper).empty()) << "a twin has no twins: " << name;
    }
  }
  EXPECT_GT(decode, 0);
  EXPECT_GT(tma, 0);
}

TEST(PdlTrigger, NoCandidateAndNoUntunedDefaultCarriesOne) {
  for (const KernelConfig& c : candidates(kProblem, kHopper)) EXPECT_EQ(c.pdl_trigger, 0);
  for (int64_t m : {1, 16, 32, 64, 256, 4096}) EXPECT_EQ(heuristic_default(kProblem, kHopper, m).pdl_trigger, 0) << m;
}

TEST(PdlTrigger, TheSourceAsksTheTemplateForIt) {
  for (Family f : {Family::decode_mma, Family::wgmma_tma}) {
    const KernelConfig c = heuristic_default(kProblem, kHopper, f == Family::decode_mma ? 16 : 256, f);
    EXPECT_NE(emit({kProblem, c, kHopper.arch}).code.find("0 /*TRIG*/"), std::string::npos) << to_string(f);
    for (const KernelConfig& v : trigger_twins(kProblem, c, kHopper)) {
      const std::string code = emit({kProblem, v, kHopper.arch}).code;
      EXPECT_NE(code.find(std::to_string(v.pdl_trigger) + " /*TRIG*/"), std::string::npos) << code;
    }
  }
}

TEST(PdlTrigger, ABadTriggerIsRefusedWithAReason) {
  KernelConfig c = heuristic_default(kProblem, kHopper, 16, Family::decode_mma);
  c.pdl_trigger = 3;
  EXPECT_NE(invalid_reason(kProblem, c, kHopper).find("pdl_trigger=3"), std::string::npos);
  c.pdl_trigger = -1;
  EXPECT_NE(invalid_reason(kProblem, c, kHopper).find("pdl_trigger=-1"), std::string::npos);
  // Below sm_90 there is no griddepcontrol: no twins, and a named one is refused.
  const Target ampere = Target::from_arch("sm_80");
  KernelConfig a = heuristic_default(kProblem, kHopper, 16, Family::decode_mma);
  EXPECT_TRUE(trigger_twins(kProblem, a, ampere).empty());
  a.pdl_trigger = 1;
  EXPECT_NE(invalid_reason(kProblem, a, ampere).find("sm_90"), std::string::npos) << invalid_reason(kProblem, a, ampere);
  // A family without the field refuses it as it refuses any field it does not use.
  KernelConfig m = heuristic_default(kProblem, kHopper, 256, Family::mma_sync);
  m.pdl_trigger = 1;
  EXPECT_NE(invalid_reason(kProblem, m, kHopper).find("does not use pdl_trigger"), std::string::npos);
  EXPECT_THROW(KernelSpec::parse_name(KernelSpec{kProblem, heuristic_default(kProblem, kHopper, 256, Family::mma_sync),
                                                 kHopper.arch}
                                          .name() +
                                      "_tr1"),
               Error);
}

}  // namespace
