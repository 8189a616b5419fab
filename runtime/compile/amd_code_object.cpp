// Formats, checked on hipRTC 5.2 output (gfx908, gfx90a):
// - hipRTC returns a bare ELF; a clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", u64 entry
//   count, then per entry u64 offset, u64 size, u64 id length, id such as
//   "hipv4-amdgcn-amd-amdhsa--gfx90a") is accepted too, as other HIP toolchains emit it.
// - ELF64 little-endian, e_machine 224 (EM_AMDGPU). Kernels are STT_FUNC symbols with a
//   matching "<name>.kd" STT_OBJECT: the 64-byte kernel descriptor (LDS at 0, scratch at 4,
//   kernarg size at 8, COMPUTE_PGM_RSRC3/1/2 at 44/48/52).
// - A SHT_NOTE section holds note "AMDGPU", type 32 (NT_AMDGPU_METADATA): msgpack with
//   amdhsa.target, amdhsa.version and amdhsa.kernels[] (.name, .vgpr_count, ...).
#include "runtime/compile/amd_code_object.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"
#include "runtime/compile/msgpack.hpp"

namespace i8g {
namespace {

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kShtSymtab = 2, kShtNote = 7, kShtNobits = 8, kShtDynsym = 11;
constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr uint8_t kSttObject = 1, kSttFunc = 2;

[[noreturn]] void fail(const std::string& what) { throw Error("read_amd_code_object", what); }

class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n, const char* who) : d_(d), n_(n), who_(who) {}
  bool fits(uint64_t off, uint64_t len) const { return off <= n_ && len <= n_ - off; }
  template <typename T>
  T get(uint64_t off) const {
    if (!fits(off, sizeof(T))) throw Error(who_, "read past the end at offset " + std::to_string(off));
    T v;
    std::memcpy(&v, d_ + off, sizeof(T));  // little-endian host, like the formats
    return v;
  }
  std::string str(uint64_t off, uint64_t len) const {
    if (!fits(off, len)) throw Error(who_, "string past the end at offset " + std::to_string(off));
    return std::string(reinterpret_cast<const char*>(d_ + off), len);
  }
  std::string cstr(uint64_t off, uint64_t limit) const {
    if (limit > n_) limit = n_;
    if (off >= limit) throw Error(who_, "string offset out of bounds");
    const void* nul = std::memchr(d_ + off, 0, limit - off);
    if (!nul) throw Error(who_, "unterminated string");
    return std::string(reinterpret_cast<const char*>(d_ + off), static_cast<const uint8_t*>(nul) - (d_ + off));
  }
  const uint8_t* at(uint64_t off) const { return d_ + off; }

 private:
  const uint8_t* d_;
  size_t n_;
  const char* who_;
};

struct Section {
  uint32_t name = 0, type = 0, link = 0;
  uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
};

int as_int(const msgpack::Value* v) {
  if (!v || v->kind != msgpack::Value::Kind::integer) return -1;
  return v->i < 0 || v->i > INT32_MAX ? -1 : int(v->i);
}

AmdKernelMeta kernel_meta(const msgpack::Value& k) {
  AmdKernelMeta m;
  if (const auto* v = k.get(".name"); v && v->kind == msgpack::Value::Kind::string) m.name = v->s;
  if (const auto* v = k.get(".symbol"); v && v->kind == msgpack::Value::Kind::string) m.symbol = v->s;
  m.vgpr_count = as_int(k.get(".vgpr_count"));
  m.agpr_count = as_int(k.get(".agpr_count"));
  m.sgpr_count = as_int(k.get(".sgpr_count"));
  m.group_segment_fixed_size = as_int(k.get(".group_segment_fixed_size"));
  m.private_segment_fixed_size = as_int(k.get(".private_segment_fixed_size"));
  m.vgpr_spill_count = as_int(k.get(".vgpr_spill_count"));
  m.sgpr_spill_count = as_int(k.get(".sgpr_spill_count"));
  m.wavefront_size = as_int(k.get(".wavefront_size"));
  m.max_flat_workgroup_size = as_int(k.get(".max_flat_workgroup_size"));
  m.kernarg_segment_size = as_int(k.get(".kernarg_segment_size"));
  if (const auto* v = k.get(".uses_dynamic_stack"); v && v->kind == msgpack::Value::Kind::boolean)
    m.uses_dynamic_stack = v->b;
  return m;
}

void read_metadata(const uint8_t* desc, size_t size, AmdCodeObject& co) {
  const msgpack::Value root = msgpack::decode(desc, size);
  if (root.kind != msgpack::Value::Kind::map) fail("metadata note is not a map");
  if (const auto* t = root.get("amdhsa.target"); t && t->kind == msgpack::Value::Kind::string) co.target = t->s;
  if (const auto* v = root.get("amdhsa.version"); v && v->kind == msgpack::Value::Kind::array)
    for (const auto& e : v->items) co.metadata_version.push_back(as_int(&e));
  if (const auto* ks = root.get("amdhsa.kernels"); ks && ks->kind == msgpack::Value::Kind::array)
    for (const auto& k : ks->items)
      if (k.kind == msgpack::Value::Kind::map) co.kernels.push_back(kernel_meta(k));
}

}  // namespace

std::vector<uint8_t> extract_code_object(const std::vector<uint8_t>& bytes, const std::string& arch) {
  static const uint8_t kElf[4] = {0x7f, 'E', 'L', 'F'};
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), kElf, 4) == 0) return bytes;
  const size_t magic = sizeof(kOffloadBundleMagic) - 1;
  if (bytes.size() < magic || std::memcmp(bytes.data(), kOffloadBundleMagic, magic) != 0)
    throw Error("extract_code_object", "neither an ELF nor a clang offload bundle");
  const Bytes b(bytes.data(), bytes.size(), "extract_code_object");
  const uint64_t entries = b.get<uint64_t>(magic);
  if (entries > bytes.size() / 24) throw Error("extract_code_object", "bundle entry count beyond the input");
  uint64_t pos = magic + 8;
  std::vector<std::string> ids;
  for (uint64_t e = 0; e < entries; ++e) {
    const uint64_t off = b.get<uint64_t>(pos), size = b.get<uint64_t>(pos + 8),
                   id_len = b.get<uint64_t>(pos + 16);
    const std::string id = b.str(pos + 24, id_len);
    pos += 24 + id_len;
    ids.push_back(id);
    // "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-": the processor follows the last "--".
    const size_t dash = id.rfind("--");
    if (id.rfind("hip", 0) != 0 || id.find("amdgcn-amd-amdhsa") == std::string::npos || dash == std::string::npos)
      continue;
    if (id.substr(dash + 2, id.find(':', dash) == std::string::npos ? std::string::npos : id.find(':', dash) - dash - 2) != arch)
      continue;
    if (!b.fits(off, size)) throw Error("extract_code_object", "bundle entry " + id + " lies outside the input");
    return std::vector<uint8_t>(bytes.begin() + off, bytes.begin() + off + size);
  }
  throw Error("extract_code_object", fmt::format("no {} code object in the bundle (entries: {})", arch,
                                                 fmt::join(ids, ", ")));
}

AmdCodeObject read_amd_code_object(const std::vector<uint8_t>& elf) {
  const Bytes b(elf.data(), elf.size(), "read_amd_code_object");
  if (elf.size() < 64 || std::memcmp(elf.data(), "\x7f" "ELF", 4) != 0) fail("not an ELF file");
  if (elf[4] != 2 || elf[5] != 1) fail("not a 64-bit little-endian ELF");
  if (b.get<uint16_t>(18) != kEmAmdgpu) fail("not an AMDGPU ELF (e_machine != 224)");
  const uint64_t shoff = b.get<uint64_t>(0x28);
  const uint16_t shentsize = b.get<uint16_t>(0x3a), shnum = b.get<uint16_t>(0x3c);
  if (shentsize < 64) fail("section header entries smaller than 64 bytes");
  if (!b.fits(shoff, uint64_t(shnum) * shentsize)) fail("section headers lie outside the file");
  std::vector<Section> secs(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t h = shoff + uint64_t(i) * shentsize;
    Section& s = secs[i];
    s.name = b.get<uint32_t>(h);
    s.type = b.get<uint32_t>(h + 4);
    s.addr = b.get<uint64_t>(h + 16);
    s.offset = b.get<uint64_t>(h + 24);
    s.size = b.get<uint64_t>(h + 32);
    s.link = b.get<uint32_t>(h + 40);
    s.entsize = b.get<uint64_t>(h + 56);
    if (s.type != kShtNobits && !b.fits(s.offset, s.size)) fail(fmt::format("section {} lies outside the file", i));
  }

  AmdCodeObject co;
  co.elf = elf;
  bool have_note = false;
  for (const Section& s : secs) {
    if (s.type != kShtNote) continue;
    for (uint64_t p = 0; p + 12 <= s.size;) {
      const uint32_t namesz = b.get<uint32_t>(s.offset + p), descsz = b.get<uint32_t>(s.offset + p + 4),
                     type = b.get<uint32_t>(s.offset + p + 8);
      const uint64_t name_at = p + 12, desc_at = name_at + ((uint64_t(namesz) + 3) & ~uint64_t(3));
      const uint64_t next = desc_at + ((uint64_t(descsz) + 3) & ~uint64_t(3));
      if (desc_at + descsz > s.size) fail("note runs past its section");
      if (type == kNtAmdgpuMetadata && namesz >= 6 && b.str(s.offset + name_at, 6) == "AMDGPU") {
        read_metadata(b.at(s.offset + desc_at), descsz, co);
        have_note = true;
      }
      p = next;
    }
  }
  if (!have_note) fail("no NT_AMDGPU_METADATA note");

  // Prefer .symtab; .dynsym has the same kernels when the static table was stripped.
  const Section* symtab = nullptr;
  for (const Section& s : secs) if (s.type == kShtSymtab) symtab = &s;
  if (!symtab) for (const Section& s : secs) if (s.type == kShtDynsym) symtab = &s;
  if (symtab) {
    if (symtab->link >= secs.size()) fail("symbol table links to a missing string table");
    const Section& strtab = secs[symtab->link];
    for (uint64_t p = 24; p + 24 <= symtab->size; p += 24) {  // entry 0 is the null symbol
      const uint64_t e = symtab->offset + p;
      const uint8_t type = b.get<uint8_t>(e + 4) & 0xf;
      if (type != kSttFunc && type != kSttObject) continue;
      AmdFunction f;
      f.name = b.cstr(strtab.offset + b.get<uint32_t>(e), strtab.offset + strtab.size);
      const uint16_t shndx = b.get<uint16_t>(e + 6);
      f.address = b.get<uint64_t>(e + 8);
      f.size = b.get<uint64_t>(e + 16);
      if (type == kSttFunc) {
        co.functions.push_back(f);
      } else if (f.name.size() > 3 && f.name.compare(f.name.size() - 3, 3, ".kd") == 0 && f.size >= 64 &&
                 shndx < secs.size() && secs[shndx].type != kShtNobits) {
        const Section& s = secs[shndx];
        if (f.address < s.addr || f.address - s.addr > s.size || 64 > s.size - (f.address - s.addr))
          fail(f.name + " lies outside its section");
        f.address = s.offset + (f.address - s.addr);  // a file offset from here on
        co.descriptors.push_back(f);
      }
    }
  }
  return co;
}

const AmdKernelMeta* AmdCodeObject::find_kernel(const std::string& name) const& {
  for (const auto& k : kernels) if (k.name == name) return &k;
  return nullptr;
}

const AmdFunction* AmdCodeObject::find_function(const std::string& name) const& {
  for (const auto& f : functions) if (f.name == name) return &f;
  return nullptr;
}

AmdKernelDescriptor AmdCodeObject::descriptor(const std::string& kernel) const {
  AmdKernelDescriptor d;
  const AmdFunction* kd = nullptr;
  for (const auto& f : descriptors) if (f.name == kernel + ".kd") kd = &f;
  if (!kd) return d;
  const Bytes b(elf.data(), elf.size(), "AmdCodeObject::descriptor");
  d.found = true;
  d.group_segment_fixed_size = b.get<uint32_t>(kd->address);
  d.private_segment_fixed_size = b.get<uint32_t>(kd->address + 4);
  d.kernarg_size = b.get<uint32_t>(kd->address + 8);
  d.rsrc3 = b.get<uint32_t>(kd->address + 44);
  d.rsrc1 = b.get<uint32_t>(kd->address + 48);
  d.rsrc2 = b.get<uint32_t>(kd->address + 52);
  return d;
}

}  // namespace i8g
