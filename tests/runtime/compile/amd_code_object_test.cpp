// The code-object reader takes untrusted bytes: malformed input must be an Error, never a
// crash or an out-of-bounds read. Also the offload bundle and the msgpack decoder on their own.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "runtime/compile/amd_code_object.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/compile/msgpack.hpp"
#include "amd_test_support.hpp"

namespace i8g {
namespace {

const Binary& real_code_object() {
  static const Binary b = [] {
    const Target t = Target::from_arch("gfx90a");
    const GemmProblem p = test::tp4_problems()[3];
    return make_compiler(t)->compile(emit({p, heuristic_default(p, t, 1), t.arch}), t);
  }();
  return b;
}

void put64(std::vector<uint8_t>& v, uint64_t x) {
  for (int i = 0; i < 8; ++i) v.push_back(uint8_t(x >> (8 * i)));
}

std::vector<uint8_t> bundle(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& entries) {
  std::vector<uint8_t> head(kOffloadBundleMagic, kOffloadBundleMagic + sizeof(kOffloadBundleMagic) - 1);
  put64(head, entries.size());
  size_t header = head.size();
  for (const auto& e : entries) header += 24 + e.first.size();
  std::vector<uint8_t> body;
  for (const auto& [id, bytes] : entries) {
    put64(head, header + body.size());
    put64(head, bytes.size());
    put64(head, id.size());
    head.insert(head.end(), id.begin(), id.end());
    body.insert(body.end(), bytes.begin(), bytes.end());
  }
  head.insert(head.end(), body.begin(), body.end());
  return head;
}

TEST(AmdCodeObject, ReadsTheKernelSymbolMetadataAndDescriptor) {
  const Binary& b = real_code_object();
  const AmdCodeObject co = read_amd_code_object(b.image);
  EXPECT_EQ(co.target.rfind("amdgcn-amd-amdhsa--gfx90a", 0), 0u);
  ASSERT_EQ(co.kernels.size(), 1u);
  const AmdKernelMeta* k = co.find_kernel(b.lowered_name);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->symbol, b.lowered_name + ".kd");
  EXPECT_EQ(k->wavefront_size, 64);
  EXPECT_GT(k->vgpr_count, 0);
  const AmdFunction* f = co.find_function(b.lowered_name);
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->size, 0u);
  const AmdKernelDescriptor d = co.descriptor(b.lowered_name);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(int(d.group_segment_fixed_size), k->group_segment_fixed_size);
  EXPECT_EQ(int(d.kernarg_size), k->kernarg_segment_size);
}

TEST(AmdCodeObject, BundleGivesTheEntryOfTheRequestedArch) {
  const std::vector<uint8_t>& elf = real_code_object().image;
  const auto b = bundle({{"host-x86_64-unknown-linux", {}},
                         {"hipv4-amdgcn-amd-amdhsa--gfx908", {1, 2, 3}},
                         {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", elf}});
  EXPECT_EQ(extract_code_object(b, "gfx90a"), elf);
  EXPECT_EQ(extract_code_object(b, "gfx908"), (std::vector<uint8_t>{1, 2, 3}));
  try {
    extract_code_object(b, "gfx942");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("hipv4-amdgcn-amd-amdhsa--gfx908"), std::string::npos) << e.what();
  }
  EXPECT_EQ(extract_code_object(elf, "gfx90a"), elf);  // a bare ELF is itself
}

TEST(AmdCodeObject, MalformedBundlesAreErrors) {
  const auto good = bundle({{"hipv4-amdgcn-amd-amdhsa--gfx90a", real_code_object().image}});
  for (size_t cut : {size_t(0), size_t(10), size_t(24), size_t(31), size_t(40), size_t(60)}) {
    std::vector<uint8_t> b(good.begin(), good.begin() + std::min(cut, good.size()));
    EXPECT_THROW(extract_code_object(b, "gfx90a"), Error) << cut;
  }
  std::vector<uint8_t> huge = good;
  for (int i = 0; i < 8; ++i) huge[24 + i] = 0xff;  // entry count
  EXPECT_THROW(extract_code_object(huge, "gfx90a"), Error);
  std::vector<uint8_t> outside = good;
  for (int i = 0; i < 8; ++i) outside[32 + 8 + i] = 0x7f;  // entry size
  EXPECT_THROW(extract_code_object(outside, "gfx90a"), Error);
}

// Every truncation and thousands of random corruptions: an Error or a result, never a crash
// (run under ASan/UBSan to see the bounds checks themselves).
TEST(AmdCodeObject, CorruptedObjectsNeverCrashTheReader) {
  const std::vector<uint8_t>& elf = real_code_object().image;
  for (size_t n = 0; n < elf.size(); n += std::max<size_t>(1, elf.size() / 300)) {
    std::vector<uint8_t> cut(elf.begin(), elf.begin() + n);
    EXPECT_THROW(read_amd_code_object(cut), Error) << n;
  }
  std::mt19937 rng(5);
  int errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bad = elf;
    for (int flips = 0; flips < 4; ++flips) bad[rng() % bad.size()] = uint8_t(rng());
    try {
      const AmdCodeObject co = read_amd_code_object(bad);
      for (const auto& k : co.kernels) co.descriptor(k.name);
    } catch (const Error&) {
      ++errors;
    }
  }
  SUCCEED() << errors << " of 3000 corruptions were refused";
}

TEST(Msgpack, DecodesTheNoteTypesAndRefusesMalformedInput) {
  const uint8_t doc[] = {0x83, 0xa1, 'a', 0xcd, 0x01, 0x00, 0xa1, 'b', 0x92, 0xc3, 0xff, 0xa1, 'c', 0xd9, 2, 'h', 'i'};
  const msgpack::Value v = msgpack::decode(doc, sizeof doc);
  ASSERT_EQ(v.kind, msgpack::Value::Kind::map);
  EXPECT_EQ(v.get("a")->i, 256);
  EXPECT_TRUE(v.get("b")->items.at(0).b);
  EXPECT_EQ(v.get("b")->items.at(1).i, -1);
  EXPECT_EQ(v.get("c")->s, "hi");
  EXPECT_EQ(v.get("zz"), nullptr);
  for (size_t n = 0; n < sizeof doc; ++n) EXPECT_THROW(msgpack::decode(doc, n), Error) << n;
  const uint8_t huge_array[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
  EXPECT_THROW(msgpack::decode(huge_array, sizeof huge_array), Error);
  const uint8_t huge_string[] = {0xdb, 0x7f, 0xff, 0xff, 0xff, 'x'};
  EXPECT_THROW(msgpack::decode(huge_string, sizeof huge_string), Error);
  std::vector<uint8_t> deep(100, 0x91);  // arrays nested 100 deep
  deep.push_back(0x00);
  EXPECT_THROW(msgpack::decode(deep.data(), deep.size()), Error);
  const uint8_t unused[] = {0xc1};
  EXPECT_THROW(msgpack::decode(unused, 1), Error);
}

}  // namespace
}  // namespace i8g
