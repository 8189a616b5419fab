// A candidate's text is the storage and display form: exactly what caches have always held,
// so a typed candidate must round-trip through it and nothing else may parse.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "runtime/serve/candidate.hpp"

namespace i8g {
namespace {

KernelSpec some_kernel() {
  GemmProblem p;
  p.n = 768;
  p.k = 4096;
  const Target t = Target::from_arch("sm_90a");
  return {p, heuristic_default(p, t, 1), t.arch};
}

TEST(Candidate, CublasLtTextIsTheOneCachesHold) {
  EXPECT_EQ(to_string(Candidate{LtAlgo{0}}), "cublaslt:algo=0");
  EXPECT_EQ(to_string(Candidate{LtAlgo{7}}), "cublaslt:algo=7");
  const Candidate c = parse_candidate("cublaslt:algo=12");
  ASSERT_NE(lt_algo_of(c), nullptr);
  EXPECT_EQ(lt_algo_of(c)->index, 12);
  EXPECT_EQ(kernel_of(c), nullptr);
}

TEST(Candidate, KernelTextIsItsName) {
  const KernelSpec s = some_kernel();
  EXPECT_EQ(to_string(Candidate{s}), s.name());
  const Candidate c = parse_candidate(s.name());
  ASSERT_NE(kernel_of(c), nullptr);
  EXPECT_EQ(*kernel_of(c), s);
  EXPECT_EQ(lt_algo_of(c), nullptr);
  std::ostringstream os;
  os << c;
  EXPECT_EQ(os.str(), s.name());
}

TEST(Candidate, OtherTextIsRefusedAsAnInvalidArgument) {
  for (const char* bad : {"", "cublaslt:algo=", "cublaslt:algo=x", "cublaslt:algo=-1", "cublaslt:algo=3 ",
                          "cublaslt:algo=1.5", "cublas:algo=1", "i8g_not_a_kernel"}) {
    try {
      parse_candidate(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << bad;
      EXPECT_NE(e.message().find(bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace i8g
