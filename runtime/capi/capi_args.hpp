// The C ABI's argument structs turned into the engine's types, with every check that needs no
// device. Pure (no GPU, no files), so it is unit-tested and fuzzed directly (fuzz/).
#pragma once
#include "i8gemm/i8gemm.h"
#include "runtime/serve/engine.hpp"

namespace i8g {

// Throws an invalid_argument Error naming `where` on a null or invalid problem.
GemmProblem problem_from_c(const i8gemm_problem* p, const char* where);
// Throws an invalid_argument Error on null args; device pointers are checked later, by the engine.
I8gArgs args_from_c(const i8gemm_args* args, const char* where);
QuantizeRequest quantize_request_from_c(const i8gemm_quantize_args* args);
// i8gemm_workspace_size's arguments: bytes non-null (set to 0 here, so a failed call leaves 0),
// max_m >= 0 and a valid problem, which it returns.
GemmProblem workspace_query_from_c(const i8gemm_problem* problem, int64_t max_m, size_t* bytes);
// i8gemm_run_with_workspace's workspace, refused when null with a size or not 256-byte aligned
// (whether it is large enough depends on the run: the engine checks that).
CallerWorkspace workspace_from_c(void* workspace, size_t workspace_bytes);
// Options of i8gemm_create_with_options (null: the defaults). Throws on a struct_size smaller
// than the fields it must hold (an uninitialized struct), never reads past struct_size.
EngineOptions engine_options_from_c(const i8gemm_options* o, const char* where);
// The engine's choice as the C struct (the name cut to fit, always terminated).
void fill_choice(const Choice& c, i8gemm_choice* out);

// The C status an Error of `kind` returns: one table, no reading of messages.
i8gemm_status status_for(ErrorKind kind);

}  // namespace i8g
