// CUBIN ELF reader: real kernels' attributes, the sm_90+ reserved smem rule, and malformed
// input (truncations, byte flips, garbage) giving Error, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "runtime/report/cubin_elf.hpp"
#include "tests/runtime/runtime_test_support.hpp"

namespace i8g {
namespace {

TEST(CubinElf, ReadsRegistersStackAndSmemOfARealKernel) {
  const Binary& b = test::compiled(test::spill_source(), "sm_80");
  CubinInfo info = read_cubin(b.image);
  EXPECT_EQ(info.sm, 80);
  EXPECT_FALSE(info.reserved_smem);
  ASSERT_EQ(info.kernels.size(), 1u);
  const CubinKernel& k = info.kernels[0];
  EXPECT_EQ(k.name, b.lowered_name);
  EXPECT_EQ(k.registers, 32);
  EXPECT_GT(k.frame_size, 0);
  EXPECT_EQ(k.static_smem_bytes, 0);
  EXPECT_GT(k.code_bytes, 0u);
}

TEST(CubinElf, SmemSectionMatchesPtxasBeforeSm90) {
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_89"}) {
    CubinInfo info = read_cubin(test::compiled(test::dp4a_source(), arch).image);
    const CubinKernel* k = info.find("_Z11dp4a_kernelILi1024EEvPKiS1_Pii");
    ASSERT_NE(k, nullptr) << arch;
    EXPECT_EQ(k->shared_section_bytes, 4096) << arch;
    EXPECT_EQ(k->static_smem_bytes, 4096) << arch;
  }
}

TEST(CubinElf, Sm90SmemSectionHoldsAReservedKiBThatIsSubtracted) {
  CubinInfo info = read_cubin(test::compiled(test::dp4a_source(), "sm_90a").image);
  EXPECT_TRUE(info.reserved_smem);
  EXPECT_EQ(info.sm, 90);
  const CubinKernel* k = info.find("_Z11dp4a_kernelILi1024EEvPKiS1_Pii");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->shared_section_bytes, 4096 + kCubinReservedSmemBytes);
  EXPECT_EQ(k->static_smem_bytes, 4096);
  // No smem and no barrier: no .nv.shared.<kernel> section at all.
  CubinInfo plain = read_cubin(test::compiled(test::plain_source(), "sm_90a").image);
  const CubinKernel* p = plain.find("_Z12plain_kernelPi");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shared_section_bytes, 0);
  EXPECT_EQ(p->static_smem_bytes, 0);
}

TEST(CubinElf, RejectsNonElfInputs) {
  EXPECT_THROW(read_cubin(nullptr, 0), Error);
  std::vector<uint8_t> zeros(4096, 0);
  EXPECT_THROW(read_cubin(zeros), Error);
  std::vector<uint8_t> image = test::compiled(test::plain_source(), "sm_80").image;
  image[18] = 62;  // EM_X86_64
  EXPECT_THROW(read_cubin(image), Error);
  image = test::compiled(test::plain_source(), "sm_80").image;
  image[4] = 1;  // ELFCLASS32
  EXPECT_THROW(read_cubin(image), Error);
}

TEST(CubinElf, EveryTruncationIsRejected) {
  // NVRTC puts the section header table at the end of the file, so any cut loses part of it.
  for (const char* arch : {"sm_75", "sm_90a"}) {
    const std::vector<uint8_t>& image = test::compiled(test::dp4a_source(), arch).image;
    ASSERT_NO_THROW(read_cubin(image));
    for (size_t n = 0; n < image.size(); n += (n < 256 ? 1 : 3)) {
      std::vector<uint8_t> cut(image.begin(), image.begin() + n);
      EXPECT_THROW(read_cubin(cut), Error) << arch << " cut at " << n;
    }
  }
}

TEST(CubinElf, RandomByteFlipsGiveErrorOrAResultNeverACrash) {
  const std::vector<uint8_t>& image = test::compiled(test::dp4a_source(), "sm_90a").image;
  std::mt19937 rng(7);
  int rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bad = image;
    int flips = 1 + int(rng() % 8);
    for (int i = 0; i < flips; ++i) bad[rng() % bad.size()] ^= uint8_t(1 + rng() % 255);
    try {
      read_cubin(bad);
    } catch (const Error&) {
      ++rejected;
    }
  }
  SUCCEED() << rejected << " of 3000 rejected";
}

TEST(CubinElf, CorruptHeadersAndRecordsAreRejected) {
  const std::vector<uint8_t> image = test::compiled(test::dp4a_source(), "sm_80").image;
  auto patched = [&](size_t off, const void* bytes, size_t n) {
    std::vector<uint8_t> v = image;
    std::memcpy(v.data() + off, bytes, n);
    return v;
  };
  const uint64_t huge = ~uint64_t(0) - 8;
  EXPECT_THROW(read_cubin(patched(40, &huge, 8)), Error);  // e_shoff near 2^64: no wraparound
  const uint16_t shnum = 0xffff;
  EXPECT_THROW(read_cubin(patched(60, &shnum, 2)), Error);
  const uint16_t shstrndx = 0xfff0;
  EXPECT_THROW(read_cubin(patched(62, &shstrndx, 2)), Error);
  const uint16_t shentsize = 8;
  EXPECT_THROW(read_cubin(patched(58, &shentsize, 2)), Error);
}

TEST(CubinElf, RandomGarbageWithAnElfHeaderIsRejected) {
  std::mt19937 rng(3);
  for (int round = 0; round < 500; ++round) {
    std::vector<uint8_t> g(64 + rng() % 2048);
    for (auto& c : g) c = uint8_t(rng());
    const uint8_t head[] = {0x7f, 'E', 'L', 'F', 2, 1};
    std::memcpy(g.data(), head, sizeof head);
    g[18] = 190;
    g[19] = 0;
    EXPECT_THROW(read_cubin(g), Error);
  }
}

}  // namespace
}  // namespace i8g
