// The AMD half of `i8gemm inspect audit` (tools/inspect_amd.cpp): the code object's own fields,
// then its LLVM IR read by LLVM 15 (runtime/report/amd_ir.hpp).
#pragma once
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "runtime/report/report.hpp"

namespace i8g::cli {

struct Finding {
  std::string severity, name, what;
};

// The seed's acceptance checks on the code object's fields (a failed one is a "reject").
void audit_amd(const cache::StoredKernel& k, const ResourceReport& rep, std::vector<Finding>& out);

// The entry's stored IR (read from `c`, since listings carry no blobs) held against its config
// and `rep` (null: no report to compare with). Every problem is a finding, never an exception.
void audit_amd_ir(cache::Cache& c, const cache::StoredKernel& k, const ResourceReport* rep, std::vector<Finding>& out);

}  // namespace i8g::cli
