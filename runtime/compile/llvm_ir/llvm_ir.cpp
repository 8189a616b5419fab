// LLVM 15 through its C++ API (llvm_ir.hpp says why this code lives apart from the library).
#include "runtime/compile/llvm_ir/llvm_ir.hpp"

#include <llvm/AsmParser/Parser.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <vector>

namespace i8g::llvm_ir {
namespace {

constexpr unsigned kLds = 3;  // AMDGPU LDS (private memory, of allocas, is 5)

bool is_bitcode(const std::string& s) {
  return s.size() >= 4 && ((s.compare(0, 4, "BC\xC0\xDE") == 0) || s.compare(0, 4, "\xDE\xC0\x17\x0B") == 0);
}

std::unique_ptr<llvm::Module> parse_text(const std::string& text, llvm::LLVMContext& ctx) {
  if (text.empty()) throw std::runtime_error("empty IR");
  if (is_bitcode(text)) throw std::runtime_error("bitcode, not LLVM assembly text");
  // The lexer treats a NUL as the end of its buffer: refuse it rather than read half a file.
  if (text.find('\0') != std::string::npos) throw std::runtime_error("the IR text holds a NUL byte");
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssembly(llvm::MemoryBufferRef(text, "stored IR"), diag, ctx);
  if (!m) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    diag.print("ir", os, false);
    throw std::runtime_error("not parseable LLVM IR: " + os.str());
  }
  std::string problems;
  llvm::raw_string_ostream vos(problems);
  if (llvm::verifyModule(*m, &vos)) throw std::runtime_error("the IR fails LLVM's verifier: " + vos.str());
  return m;
}

// The kernel and every function with a body it reaches through direct calls.
std::vector<const llvm::Function*> reachable(const llvm::Function& kernel) {
  std::vector<const llvm::Function*> order{&kernel};
  std::set<const llvm::Function*> seen{&kernel};
  for (size_t i = 0; i < order.size(); ++i)
    for (const llvm::BasicBlock& bb : *order[i])
      for (const llvm::Instruction& inst : bb)
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
          if (const llvm::Function* f = call->getCalledFunction())
            if (!f->isDeclaration() && seen.insert(f).second) order.push_back(f);
  return order;
}

// Functions that use `v`, looking through constant expressions (a GEP of an LDS array).
void users_of(const llvm::Value* v, std::set<const llvm::Function*>& out, int depth = 0) {
  if (depth > 16) return;
  for (const llvm::User* u : v->users()) {
    if (const auto* inst = llvm::dyn_cast<llvm::Instruction>(u)) out.insert(inst->getFunction());
    else if (llvm::isa<llvm::Constant>(u)) users_of(u, out, depth + 1);
  }
}

nlohmann::json kernel_facts(const llvm::Function& kernel, const llvm::Module& m) {
  const llvm::DataLayout& dl = m.getDataLayout();
  int mfma = 0;
  nlohmann::json allocas = nlohmann::json::array(), calls = nlohmann::json::array();
  const std::vector<const llvm::Function*> funcs = reachable(kernel);
  for (const llvm::Function* f : funcs)
    for (const llvm::BasicBlock& bb : *f)
      for (const llvm::Instruction& inst : bb) {
        if (const auto* a = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
          std::string type;
          llvm::raw_string_ostream os(type);
          a->getAllocatedType()->print(os);
          const auto size = a->getAllocationSizeInBits(dl);
          allocas.push_back({{"function", f->getName().str()}, {"type", os.str()},
                             {"bytes", size && !size->isScalable() ? int64_t(size->getFixedSize() / 8) : -1},
                             {"addrspace", a->getAddressSpace()}});
          continue;
        }
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
        if (!call) continue;
        const llvm::Function* callee = call->getCalledFunction();
        if (callee && callee->isIntrinsic()) {
          mfma += callee->getName().startswith("llvm.amdgcn.mfma.");
          continue;
        }
        if (call->isInlineAsm()) continue;
        calls.push_back({{"function", f->getName().str()},
                         {"callee", callee ? callee->getName().str() : std::string()},
                         {"kind", !callee ? "indirect" : callee->isDeclaration() ? "external" : "defined"}});
      }
  int64_t lds = 0;
  const std::set<const llvm::Function*> mine(funcs.begin(), funcs.end());
  for (const llvm::GlobalVariable& g : m.globals()) {
    if (g.getAddressSpace() != kLds) continue;
    std::set<const llvm::Function*> used;
    users_of(&g, used);
    bool ours = false;
    for (const llvm::Function* f : used) ours |= mine.count(f) > 0;
    if (ours && g.getValueType()->isSized()) lds += int64_t(dl.getTypeAllocSize(g.getValueType()).getKnownMinSize());
  }
  return {{"name", kernel.getName().str()}, {"mfma", mfma}, {"lds_bytes", lds},
          {"allocas", allocas}, {"calls", calls}};
}

}  // namespace

std::string bitcode_to_text(const std::string& bitcode) {
  llvm::LLVMContext ctx;
  llvm::Expected<std::unique_ptr<llvm::Module>> m =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "comgr bitcode"), ctx);
  if (!m) throw std::runtime_error("unreadable bitcode: " + llvm::toString(m.takeError()));
  std::string text;
  llvm::raw_string_ostream os(text);
  (*m)->print(os, nullptr);
  return os.str();
}

std::string facts_json(const std::string& text) {
  llvm::LLVMContext ctx;
  const std::unique_ptr<llvm::Module> m = parse_text(text, ctx);
  nlohmann::json kernels = nlohmann::json::array();
  for (const llvm::Function& f : *m)
    if (!f.isDeclaration() && f.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL)
      kernels.push_back(kernel_facts(f, *m));
  return nlohmann::json{{"kernels", kernels}}.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

}  // namespace i8g::llvm_ir

extern "C" int i8g_llvm_ir_run(char op, const char* in, size_t in_size, char** out, size_t* out_size) {
  std::string answer;
  int rc = 0;
  try {
    const std::string input(in ? in : "", in ? in_size : 0);
    if (op == 'T') answer = i8g::llvm_ir::bitcode_to_text(input);
    else if (op == 'F') answer = i8g::llvm_ir::facts_json(input);
    else throw std::runtime_error(std::string("unknown op ") + op);
  } catch (const std::exception& e) {
    answer = e.what();
    rc = 1;
  }
  *out = static_cast<char*>(std::malloc(answer.size() + 1));
  if (!*out) return 2;
  std::memcpy(*out, answer.data(), answer.size());
  (*out)[answer.size()] = '\0';
  *out_size = answer.size();
  return rc;
}

extern "C" void i8g_llvm_ir_free(char* p) { std::free(p); }
