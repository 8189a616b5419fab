// The IR reader itself (runtime/compile/llvm_ir/), linked with LLVM 15 and nothing else that
// carries an LLVM: the facts it finds in hand-written IR, and that every bad input is answered
// with a message (the C entry point too), never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "runtime/compile/llvm_ir/llvm_ir.hpp"

namespace i8g {
namespace {

std::string seed() {
  std::ifstream f(std::string(I8G_SOURCE_DIR) + "/fuzz/corpus/fuzz_llvm_ir/kernel.ll");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(LlvmIrReader, FindsMfmaLdsPrivateAllocasAndCallsOfEachKernel) {
  const nlohmann::json j = nlohmann::json::parse(llvm_ir::facts_json(seed()));
  ASSERT_EQ(j.at("kernels").size(), 1u);
  const nlohmann::json& k = j["kernels"][0];
  EXPECT_EQ(k["name"], "k");
  EXPECT_EQ(k["mfma"], 1);
  EXPECT_EQ(k["lds_bytes"], 256);
  ASSERT_EQ(k["allocas"].size(), 1u);
  EXPECT_EQ(k["allocas"][0]["addrspace"], 5);
  EXPECT_EQ(k["allocas"][0]["bytes"], 64);
  EXPECT_EQ(k["allocas"][0]["type"], "[16 x i32]");
  ASSERT_EQ(k["calls"].size(), 2u);
  EXPECT_EQ(k["calls"][0]["kind"], "external");
  EXPECT_EQ(k["calls"][1]["callee"], "helper");
  EXPECT_EQ(k["calls"][1]["kind"], "defined");
}

TEST(LlvmIrReader, NonKernelFunctionsAreNotKernels) {
  const nlohmann::json j = nlohmann::json::parse(llvm_ir::facts_json("define void @f() {\n  ret void\n}\n"));
  EXPECT_TRUE(j.at("kernels").empty());
}

TEST(LlvmIrReader, BadTextIsRejectedWithLlvmsDiagnostic) {
  const std::string good = seed();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty IR"},
      {good.substr(0, good.size() / 2), "not parseable LLVM IR"},
      {"garbage", "expected top-level entity"},
      {std::string("BC\xC0\xDE", 4) + "rest", "bitcode, not LLVM assembly text"},
      {good + std::string(1, '\0'), "NUL byte"},
      // Parses, but a use before its definition fails the verifier.
      {"define void @f() {\n  %a = add i32 %b, 1\n  %b = add i32 1, 1\n  ret void\n}\n", "verifier"},
  };
  for (const auto& [text, why] : bad) {
    try {
      llvm_ir::facts_json(text);
      ADD_FAILURE() << "accepted: " << text.substr(0, 60);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(llvm_ir::bitcode_to_text("not bitcode"), std::runtime_error);
}

TEST(LlvmIrReader, TheCEntryPointAnswersEveryInput) {
  for (const auto& [op, input, rc] : {std::tuple{'F', seed(), 0}, std::tuple{'F', std::string("x"), 1},
                                       std::tuple{'T', std::string("x"), 1}, std::tuple{'Q', std::string(), 1}}) {
    char* out = nullptr;
    size_t size = 0;
    EXPECT_EQ(i8g_llvm_ir_run(op, input.data(), input.size(), &out, &size), rc);
    ASSERT_NE(out, nullptr);
    EXPECT_GT(size, 0u);
    i8g_llvm_ir_free(out);
  }
}

}  // namespace
}  // namespace i8g
