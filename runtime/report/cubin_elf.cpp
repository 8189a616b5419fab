// CUBIN facts, checked on NVRTC 13.0 output for sm_75/80/86/89/90/90a (and sm_100/120):
// - kernels are .symtab STT_FUNC symbols with st_other & 0x10 (STO_CUDA_ENTRY);
// - the global .nv.info holds [fmt u8][attr u8][u16] records; fmt 0x04 (SVAL) is followed by
//   u16 bytes of payload, fmt 0x01/0x02/0x03 (NVAL/BVAL/HVAL) carry the u16 inline. Per-kernel
//   attrs there are SVAL [u32 symbol index][u32 value]: 0x2f REGCOUNT, 0x11 FRAME_SIZE,
//   0x12 MIN_STACK_SIZE, 0x23 MAX_STACK_SIZE. (sh_info's high byte holds registers only before
//   sm_90, so it is not used.)
// - static smem is the size of the NOBITS section .nv.shared.<kernel>, absent when 0. On
//   sm_90+ the CUBIN also has a .nv.shared.reserved.0 section, and every .nv.shared.<kernel>
//   section is then 1 KiB larger than ptxas's "bytes smem" (4096 -> 0x1400, 400 -> 0x590, 16
//   -> 0x410, 0 with a barrier -> 0x400). Rule: if .nv.shared.reserved.0 exists, static smem =
//   section size - 1024 (clamped at 0); otherwise the section size. sm_75..89 sizes match ptxas.
#include "runtime/report/cubin_elf.hpp"

#include <cstring>
#include <map>

#include "core/error.hpp"

namespace i8g {
namespace {

constexpr uint16_t kEmCuda = 190;
constexpr uint32_t kShtSymtab = 2, kShtNobits = 8;
constexpr uint8_t kSttFunc = 2, kStoCudaEntry = 0x10;
constexpr uint8_t kFmtSval = 0x04;
constexpr uint8_t kAttrFrameSize = 0x11, kAttrMinStack = 0x12, kAttrMaxStack = 0x23,
                  kAttrRegcount = 0x2f;

[[noreturn]] void fail(const std::string& what) { throw Error("read_cubin", what); }

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool fits(uint64_t off, uint64_t len) const { return off <= n_ && len <= n_ - off; }
  template <typename T>
  T get(uint64_t off) const {
    if (!fits(off, sizeof(T))) fail("read past the end at offset " + std::to_string(off));
    T v;
    std::memcpy(&v, d_ + off, sizeof(T));  // unaligned-safe; CUBINs are little-endian like x86/arm64
    return v;
  }
  // NUL-terminated string at `off`, which must end before `limit`.
  std::string cstr(uint64_t off, uint64_t limit) const {
    if (limit > n_) limit = n_;
    if (off >= limit) fail("string offset out of bounds");
    const void* nul = std::memchr(d_ + off, 0, limit - off);
    if (!nul) fail("unterminated string");
    return std::string(reinterpret_cast<const char*>(d_ + off), static_cast<const uint8_t*>(nul) - (d_ + off));
  }

 private:
  const uint8_t* d_;
  size_t n_;
};

struct Section {
  std::string name;
  uint32_t type = 0, link = 0, info = 0;
  uint64_t offset = 0, size = 0, entsize = 0;
};

int to_int(uint32_t v) { return v > 0x7fffffffu ? -1 : static_cast<int>(v); }

}  // namespace

const CubinKernel* CubinInfo::find(const std::string& name) const& {
  for (const auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

CubinInfo read_cubin(const uint8_t* data, size_t size) {
  if (!data || size < 64) fail("too small for an ELF64 header (" + std::to_string(size) + " bytes)");
  Reader r(data, size);
  if (std::memcmp(data, "\x7f" "ELF", 4) != 0) fail("no ELF magic");
  if (data[4] != 2 || data[5] != 1) fail("not a little-endian ELF64 file");
  if (r.get<uint16_t>(18) != kEmCuda) fail("not a CUDA ELF (e_machine != 190)");

  CubinInfo info;
  uint32_t flags = r.get<uint32_t>(48);
  info.sm = data[8] >= 8 ? int((flags >> 8) & 0xff) : int(flags & 0xff);  // ABI v8 moved the field
  uint64_t shoff = r.get<uint64_t>(40);
  uint16_t shentsize = r.get<uint16_t>(58), shnum = r.get<uint16_t>(60), shstrndx = r.get<uint16_t>(62);
  if (shnum == 0) fail("no section headers");
  if (shentsize < 64) fail("section header entries too small");
  if (!r.fits(shoff, uint64_t(shentsize) * shnum)) fail("section headers out of bounds");
  if (shstrndx >= shnum) fail("section name table index out of range");
  // The program headers are what the driver loads by; a cut table is as broken as a cut section.
  uint64_t phoff = r.get<uint64_t>(32);
  uint16_t phentsize = r.get<uint16_t>(54), phnum = r.get<uint16_t>(56);
  if (phnum > 0 && (phentsize < 56 || !r.fits(phoff, uint64_t(phentsize) * phnum)))
    fail("program headers out of bounds");

  std::vector<Section> secs(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t h = shoff + uint64_t(i) * shentsize;
    Section& s = secs[i];
    s.type = r.get<uint32_t>(h + 4);
    s.offset = r.get<uint64_t>(h + 24);
    s.size = r.get<uint64_t>(h + 32);
    s.link = r.get<uint32_t>(h + 40);
    s.info = r.get<uint32_t>(h + 44);
    s.entsize = r.get<uint64_t>(h + 56);
    if (s.type != kShtNobits && !r.fits(s.offset, s.size))
      fail("section " + std::to_string(i) + " out of bounds");
  }
  const Section& shstr = secs[shstrndx];
  if (shstr.type == kShtNobits) fail("section name table has no data");
  for (uint16_t i = 0; i < shnum; ++i) {
    uint32_t name_off = r.get<uint32_t>(shoff + uint64_t(i) * shentsize);
    if (name_off >= shstr.size) fail("section name out of bounds");
    secs[i].name = r.cstr(shstr.offset + name_off, shstr.offset + shstr.size);
  }

  // Kernels from the symbol table.
  std::map<uint32_t, size_t> by_symbol;  // symbol index -> kernels[]
  const Section* symtab = nullptr;
  for (const auto& s : secs)
    if (s.type == kShtSymtab) symtab = &s;
  if (!symtab) fail("no .symtab");
  if (symtab->entsize != 24) fail("unexpected .symtab entry size");
  if (symtab->link >= shnum || secs[symtab->link].type == kShtNobits) fail("bad .symtab string table link");
  const Section& strtab = secs[symtab->link];
  for (uint64_t i = 0; i < symtab->size / 24; ++i) {
    uint64_t e = symtab->offset + i * 24;
    uint32_t name_off = r.get<uint32_t>(e);
    uint8_t st_info = r.get<uint8_t>(e + 4), st_other = r.get<uint8_t>(e + 5);
    if ((st_info & 0xf) != kSttFunc || !(st_other & kStoCudaEntry)) continue;
    if (name_off >= strtab.size) fail("symbol name out of bounds");
    CubinKernel k;
    k.name = r.cstr(strtab.offset + name_off, strtab.offset + strtab.size);
    k.symbol_index = static_cast<uint32_t>(i);
    k.section_index = r.get<uint16_t>(e + 6);
    k.code_bytes = r.get<uint64_t>(e + 16);
    by_symbol[k.symbol_index] = info.kernels.size();
    info.kernels.push_back(std::move(k));
  }

  for (const auto& s : secs)
    if (s.name == ".nv.shared.reserved.0") info.reserved_smem = true;
  const int reserved = info.reserved_smem ? kCubinReservedSmemBytes : 0;
  for (auto& k : info.kernels) {
    for (const auto& s : secs) {
      if (s.name != ".nv.shared." + k.name) continue;
      if (s.size > 0x7fffffff) fail("implausible shared memory section size");
      k.shared_section_bytes = static_cast<int>(s.size);
      k.static_smem_bytes = k.shared_section_bytes > reserved ? k.shared_section_bytes - reserved : 0;
    }
  }

  // Per-kernel attributes from the global .nv.info section.
  for (const auto& s : secs) {
    if (s.name != ".nv.info") continue;
    if (s.type == kShtNobits) fail(".nv.info has no data");
    uint64_t p = s.offset, end = s.offset + s.size;
    while (p < end) {
      if (end - p < 4) fail("truncated .nv.info record");
      uint8_t fmt = r.get<uint8_t>(p), attr = r.get<uint8_t>(p + 1);
      uint16_t len = r.get<uint16_t>(p + 2);
      p += 4;
      if (fmt == 0x01 || fmt == 0x02 || fmt == 0x03) continue;  // value inline in the u16
      if (fmt != kFmtSval) fail("unknown .nv.info record format " + std::to_string(fmt));
      if (len > end - p) fail("truncated .nv.info payload");
      if (len >= 8 && (attr == kAttrRegcount || attr == kAttrFrameSize || attr == kAttrMinStack ||
                       attr == kAttrMaxStack)) {
        auto it = by_symbol.find(r.get<uint32_t>(p));
        if (it != by_symbol.end()) {
          int v = to_int(r.get<uint32_t>(p + 4));
          CubinKernel& k = info.kernels[it->second];
          if (attr == kAttrRegcount) k.registers = v;
          else if (attr == kAttrFrameSize) k.frame_size = v;
          else if (attr == kAttrMinStack) k.min_stack_size = v;
          else k.max_stack_size = v;
        }
      }
      p += len;
    }
  }
  return info;
}

}  // namespace i8g
