// The family table: every family has one complete row, its names list exactly the fields it
// uses and round-trip, its template arguments are named as the template's parameters, names of
// the older ten-field form are refused as stale, and the untuned defaults of the TP4 shapes
// stay what they were before the table (the cost models now count occupancy through
// core/occupancy.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

const Family kAllFamilies[] = {Family::simt_dp4a, Family::mma_sync, Family::mfma, Family::wgmma, Family::wgmma_tma,
                               Family::decode_mma};

// A target each family runs on (wgmma, decode_mma: only with their experimental flags).
Target target_for(const FamilyInfo& f) {
  Target t = Target::from_arch(f.amd ? "gfx90a" : "sm_90a");
  t.experimental_wgmma = true;
  return t;
}

std::vector<KernelConfig> candidates_of(const FamilyInfo& f, const GemmProblem& p) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, target_for(f)))
    if (c.family == f.family) out.push_back(c);
  return out;
}

// The parameter names of the kernel template `name` (e.g. "mma_sync_kernel") in `header`.
std::vector<std::string> template_parameters(const std::string& header, const std::string& name) {
  const size_t at = header.find(name + "(");
  const size_t open = header.rfind("template <", at);
  const size_t global = header.find("__global__", open);
  if (at == std::string::npos || open == std::string::npos || global > at) return {};
  const size_t close = header.rfind('>', global);
  std::stringstream list(header.substr(open + 10, close - open - 10));
  std::vector<std::string> names;
  for (std::string param; std::getline(list, param, ',');) {
    while (!param.empty() && std::isspace(static_cast<unsigned char>(param.back()))) param.pop_back();
    names.push_back(param.substr(param.find_last_of(" \n") + 1));
  }
  return names;
}

}  // namespace

TEST(FamilyTable, EveryFamilyHasOneCompleteRow) {
  std::set<std::string> names;
  for (Family fam : kAllFamilies) {
    const FamilyInfo& f = family_info(fam);
    EXPECT_EQ(f.family, fam);
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_EQ(parse_family(f.name), fam);
    EXPECT_STREQ(to_string(fam), f.name);
    EXPECT_TRUE(f.unsupported && f.candidates && f.invalid_reason && f.cost && f.threads && f.static_smem &&
                f.dynamic_smem && f.registers && f.launch && f.workspace && f.alignment && f.template_args)
        << f.name;
    bool embedded = false;
    for (const EmbeddedFile& e : embedded_templates()) embedded |= f.header == std::string(e.path);
    EXPECT_TRUE(embedded) << f.header;
  }
  EXPECT_EQ(families().size(), std::size(kAllFamilies));
  EXPECT_FALSE(parse_family("mma"));
}

TEST(FamilyTable, TemplateArgumentsAreNamedAsTheTemplatesParameters) {
  for (const FamilyInfo* f : families()) {
    const GemmProblem p{2560, 4096};
    const std::vector<KernelConfig> cs = candidates_of(*f, p);
    ASSERT_FALSE(cs.empty()) << f->name;
    std::string header;
    for (const EmbeddedFile& e : embedded_templates())
      if (f->header == std::string(e.path)) header = e.text;
    const std::string kernel = std::string(f->kernel).substr(std::string(f->kernel).rfind(':') + 1);
    std::vector<std::string> args;
    for (const TemplateArg& a : f->template_args({p, cs.front(), target_for(*f).arch})) args.push_back(a.name);
    EXPECT_EQ(args, template_parameters(header, kernel)) << f->name;
  }
}

TEST(FamilyTable, NamesListOnlyTheFieldsTheFamilyUses) {
  const GemmProblem p{768, 4096};
  for (const FamilyInfo* f : families())
    for (const KernelConfig& c : candidates_of(*f, p)) {
      const std::string text = c.to_string();
      size_t optional_named = 0;  // optional fields away from their default
      for (ConfigField field : f->optional_name_fields)
        optional_named += c.*field_info(field).member != KernelConfig{}.*field_info(field).member;
      EXPECT_EQ(size_t(std::count(text.begin(), text.end(), '_')), 2 + f->name_fields.size() + optional_named) << text;
      for (const ConfigFieldInfo& field : config_fields()) {
        const bool optional =
            std::count(f->optional_name_fields.begin(), f->optional_name_fields.end(), field.field) > 0;
        const bool named = std::count(f->name_fields.begin(), f->name_fields.end(), field.field) > 0 ||
                           (optional && c.*field.member != KernelConfig{}.*field.member);
        EXPECT_EQ(text.find("_" + std::string(field.tag) + std::to_string(c.*field.member)) != std::string::npos,
                  named)
            << text << " " << field.name;
        if (!named) {
          EXPECT_EQ(c.*field.member, KernelConfig{}.*field.member) << text << " " << field.name;
        }
      }
    }
  // One of each, as tune and inspect print them.
  for (const auto& [family, text] : {std::pair{Family::simt_dp4a, "bm16_bn128_bk32_tm4_tn4_v16"},
                                     std::pair{Family::mma_sync, "bm32_bn32_bk128_wm2_wn2_s4_sk3"},
                                     std::pair{Family::mfma, "bm128_bn128_bk64_ins32_wm2_wn2_s2_v16"},
                                     std::pair{Family::wgmma, "bm128_bn128_bk128_wg1_s4"},
                                     std::pair{Family::wgmma_tma, "bm64_bn128_bk128_wg2_s8_sc2_sk1"},
                                     std::pair{Family::wgmma_tma, "bm128_bn128_bk128_wg2_s6_sc2_sk1_cm2"},
                                     std::pair{Family::decode_mma, "bm8_bn32_bk128_wk8_s2_sk4"}})
    EXPECT_EQ(KernelConfig::parse(family, text).to_string(), text);
  const KernelConfig mma = KernelConfig::parse(Family::mma_sync, "bm32_bn32_bk128_wm2_wn2_s4_sk3");
  EXPECT_EQ(mma.warps_m, 2);
  EXPECT_EQ(mma.split_k, 3);
  EXPECT_EQ(mma.vec, 16);
  EXPECT_EQ(KernelConfig::parse(Family::wgmma, "bm128_bn128_bk128_wg2_s4").warpgroups, 2);
  EXPECT_THROW(KernelConfig::parse(Family::mma_sync, "bm16_bn128_bk32_tm4_tn4_v16"), Error);
}

TEST(FamilyTable, AFieldOutsideTheNameMakesTheConfigInvalid) {
  const GemmProblem p{2560, 4096};
  for (const FamilyInfo* f : families()) {
    const KernelConfig good = candidates_of(*f, p).front();
    for (const ConfigFieldInfo& field : config_fields()) {
      if (std::count(f->name_fields.begin(), f->name_fields.end(), field.field)) continue;
      KernelConfig bad = good;
      bad.*field.member += 7;  // a value no field takes (wgmma_tma's l2_hint takes 0 to 3)
      const std::string why = invalid_reason(p, bad, target_for(*f));
      EXPECT_NE(why.find(field.name), std::string::npos) << f->name << ": " << why;
      EXPECT_NE(bad, good);
      EXPECT_FALSE((KernelSpec{p, bad, "sm_90a"} == KernelSpec{p, good, "sm_90a"})) << "same name, other config";
    }
  }
}

// A zero anywhere (as a parsed name may hold) is a reason, not a division by zero.
TEST(FamilyTable, ZeroFieldsAreRefusedNotACrash) {
  const GemmProblem p{2560, 4096};
  for (const FamilyInfo* f : families()) {
    const KernelConfig good = candidates_of(*f, p).front();
    std::vector<int KernelConfig::*> members = {&KernelConfig::bm, &KernelConfig::bn, &KernelConfig::bk};
    for (ConfigField field : f->name_fields) members.push_back(field_info(field).member);
    // (an optional field whose default is 0 — decode_mma's schedule — is valid at 0)
    for (ConfigField field : f->optional_name_fields)
      if (KernelConfig{}.*field_info(field).member != 0) members.push_back(field_info(field).member);
    for (int KernelConfig::*member : members) {
      KernelConfig bad = good;
      bad.*member = 0;
      EXPECT_NE(invalid_reason(p, bad, target_for(*f)), "") << f->name << ": " << bad;
    }
  }
}

TEST(FamilyTable, TenFieldNamesAreRefusedAsStale) {
  for (const char* old : {"i8g_sm90a_simt_dp4a_n768_k4096_nk_tok_ch_bf16_bm16_bn128_bk32_tm4_tn4_wm1_wn1_s1_sk1_v16",
                          "i8g_sm90a_mma_sync_n2560_k4096_nk_tok_ch_bf16_bias_bm128_bn128_bk64_tm0_tn0_wm2_wn4_s4_sk1_v16",
                          "i8g_gfx90a_mfma_n2560_k4096_nk_tok_ch_bf16_bm128_bn128_bk64_tm32_tn32_wm2_wn2_s2_sk1_v16"}) {
    try {
      KernelSpec::parse_name(old);
      ADD_FAILURE() << old << " parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(e.message().find("ten-field"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("stale"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(KernelConfig::parse(Family::mma_sync, "bm128_bn128_bk64_tm0_tn0_wm2_wn4_s4_sk1_v16"), Error);
}

TEST(FamilyTable, OnlyFamiliesThatSplitKHaveSplitCandidates) {
  for (const FamilyInfo* f : families())
    for (const GemmProblem& p : {GemmProblem{768, 4096}, GemmProblem{2560, 4096}})
      for (const KernelConfig& c : candidates_of(*f, p))
        if (!f->splits_k) {
          EXPECT_EQ(c.split_k, 1) << f->name;
        }
  EXPECT_TRUE(family_info(Family::mma_sync).splits_k);
  EXPECT_TRUE(family_info(Family::wgmma_tma).splits_k);
}

TEST(FamilyTable, TheUntunedDefaultComesFromARankedFamily) {
  EXPECT_EQ(family_info(Family::wgmma).untuned_rank, 0) << "experimental";
  for (const char* arch : {"sm_75", "sm_80", "sm_90a", "gfx90a"}) {
    Target t = Target::from_arch(arch);
    t.experimental_wgmma = true;
    for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{2560, 4095}})
      EXPECT_GT(family_info(heuristic_default(p, t, 16).family).untuned_rank, 0) << arch;
  }
}

// Before the family table each cost model had its own blocks-per-SM count; these are the
// defaults they chose (family:config at M = 1, 16, 256, 4096; the same for [K,N] weights),
// unchanged now that the cost models count occupancy through core/occupancy.hpp. Since then
// sm_90a's [N,K] problems take the TMA family from M = 17 up (`nk`, where given),
// its tile by the wave-count rule of family_wgmma_tma.cpp (768 x 4096 at M = 4096: one wave of
// the wide 128 x 192 tile; at M = 256 the narrow 64 x 48, 2560 x 4096 the narrow 64 x 80), and 2560 x 4096 [N,K] takes decode_mma up to M = 16
// in its shared-memory ring (family_decode_mma.cpp, serves_untuned). Session 30 refitted both
// rules to session 29's H200 races: decode_mma up to M = 16 on every [N,K] shape here (N >= 768,
// K >= 384), cooperative 128 x 48 at 2560 x 4096 M = 256, and 64 x 48 with two K tiles a stage
// (bk 256) at 768 x 4096 M = 256. Session 31: 768 x 4096 up to M = 16 takes decode_mma's deep
// ring of 8 warps (its 48 column tiles are one wave; deep_untuned).
TEST(FamilyTable, Tp4UntunedDefaultsAreUnchanged) {
  struct Row {
    const char* arch;
    std::pair<int64_t, int64_t> nk;
    std::vector<std::string> at_m;
    std::vector<std::string> nk_at_m = {};  // [N,K] weights, where they differ
  };
  const Row rows[] = {
      {"sm_90a", {2560, 4096},
       {"mma_sync:bm32_bn32_bk128_wm2_wn2_s4_sk3", "mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk6",
        "mma_sync:bm64_bn64_bk128_wm2_wn2_s4_sk3", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"},
       {"decode_mma:bm8_bn16_bk256_wk4_s3_sk1_sc1", "decode_mma:bm16_bn16_bk128_wk4_s3_sk1_sc1",
        "wgmma_tma:bm128_bn48_bk128_wg2_s10_sc1_sk1", "wgmma_tma:bm128_bn128_bk128_wg2_s7_sc2_sk1"}},
      {"sm_90a", {4096, 2048},
       {"mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk4", "mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk4",
        "mma_sync:bm64_bn64_bk64_wm2_wn2_s4_sk1", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"},
       {"decode_mma:bm8_bn16_bk256_wk4_s3_sk1_sc1", "decode_mma:bm16_bn16_bk128_wk4_s3_sk1_sc1",
        "wgmma_tma:bm128_bn64_bk128_wg2_s8_sc2_sk1", "wgmma_tma:bm128_bn128_bk128_wg2_s7_sc2_sk1"}},
      {"sm_90a", {768, 4096},
       {"mma_sync:bm16_bn64_bk128_wm1_wn4_s2_sk16", "mma_sync:bm16_bn64_bk128_wm1_wn4_s2_sk16",
        "mma_sync:bm64_bn64_bk128_wm2_wn2_s4_sk8", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"},
       {"decode_mma:bm8_bn16_bk128_wk8_s4_sk1_sc1", "decode_mma:bm16_bn16_bk128_wk8_s4_sk1_sc1",
        "wgmma_tma:bm64_bn48_bk256_wg2_s8_sc2_sk1", "wgmma_tma:bm128_bn192_bk128_wg2_s5_sc1_sk1"}},
      {"sm_90a", {4096, 384},
       {"mma_sync:bm32_bn32_bk64_wm2_wn2_s4_sk1", "mma_sync:bm32_bn32_bk64_wm2_wn2_s4_sk1",
        "mma_sync:bm64_bn64_bk64_wm2_wn2_s4_sk1", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"},
       {"decode_mma:bm8_bn16_bk256_wk4_s3_sk1_sc1", "decode_mma:bm16_bn16_bk128_wk4_s3_sk1_sc1",
        "wgmma_tma:bm128_bn64_bk128_wg2_s8_sc2_sk1", "wgmma_tma:bm128_bn128_bk128_wg2_s5_sc2_sk1_es1"}},
      {"sm_80", {2560, 4096},
       {"mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk8", "mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk8",
        "mma_sync:bm64_bn64_bk128_wm2_wn2_s4_sk2", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"}},
      {"sm_80", {4096, 2048},
       {"mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk3", "mma_sync:bm16_bn64_bk128_wm1_wn4_s4_sk3",
        "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"}},
      {"sm_80", {768, 4096},
       {"mma_sync:bm16_bn64_bk128_wm1_wn4_s2_sk16", "mma_sync:bm16_bn64_bk128_wm1_wn4_s2_sk16",
        "mma_sync:bm64_bn256_bk128_wm1_wn8_s4_sk8", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"}},
      {"sm_80", {4096, 384},
       {"mma_sync:bm32_bn32_bk64_wm2_wn2_s4_sk1", "mma_sync:bm32_bn32_bk64_wm2_wn2_s4_sk1",
        "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1", "mma_sync:bm128_bn128_bk64_wm2_wn4_s4_sk1"}},
      {"sm_75", {2560, 4096},
       {"simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16", "simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16",
        "simt_dp4a:bm16_bn128_bk32_tm4_tn4_v16", "simt_dp4a:bm16_bn256_bk32_tm4_tn8_v16"}},
      {"sm_75", {4096, 2048},
       {"simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16", "simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16",
        "simt_dp4a:bm16_bn256_bk32_tm4_tn8_v16", "simt_dp4a:bm16_bn256_bk32_tm4_tn8_v16"}},
      {"sm_75", {768, 4096},
       {"simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16", "simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16",
        "simt_dp4a:bm8_bn128_bk32_tm2_tn4_v16", "simt_dp4a:bm16_bn128_bk32_tm4_tn4_v16"}},
      {"sm_75", {4096, 384},
       {"simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16", "simt_dp4a:bm8_bn64_bk32_tm2_tn2_v16",
        "simt_dp4a:bm16_bn256_bk32_tm4_tn8_v16", "simt_dp4a:bm16_bn256_bk32_tm4_tn8_v16"}},
      {"gfx90a", {2560, 4096},
       {"mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16",
        "mfma:bm64_bn64_bk64_ins32_wm1_wn2_s2_v16", "mfma:bm128_bn128_bk64_ins32_wm2_wn2_s2_v16"}},
      {"gfx90a", {4096, 2048},
       {"mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16",
        "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm128_bn128_bk64_ins32_wm2_wn2_s2_v16"}},
      {"gfx90a", {768, 4096},
       {"mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16",
        "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm128_bn128_bk64_ins32_wm2_wn2_s2_v16"}},
      {"gfx90a", {4096, 384},
       {"mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16",
        "mfma:bm64_bn64_bk64_ins32_wm2_wn2_s2_v16", "mfma:bm128_bn128_bk64_ins32_wm2_wn2_s2_v16"}},
  };
  for (const Row& r : rows)
    for (WeightLayout layout : {WeightLayout::nk, WeightLayout::kn}) {
      const GemmProblem p{r.nk.first, r.nk.second, layout};
      const int64_t ms[] = {1, 16, 256, 4096};
      for (size_t i = 0; i < 4; ++i) {
        const KernelConfig c = heuristic_default(p, Target::from_arch(r.arch), ms[i]);
        const std::vector<std::string>& want = layout == WeightLayout::nk && !r.nk_at_m.empty() ? r.nk_at_m : r.at_m;
        EXPECT_EQ(std::string(to_string(c.family)) + ":" + c.to_string(), want[i])
            << p.key() << " m=" << ms[i] << " on " << r.arch;
      }
    }
}
