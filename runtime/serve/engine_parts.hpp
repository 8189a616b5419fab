// The engine's loaded modules, shared by engine.cpp (prepare, run) and engine_load.cpp (what
// fetches, compiles and loads them). Private to runtime/serve.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/serve/engine.hpp"

namespace i8g {

struct Engine::Module {
  CUmodule handle = nullptr;
  explicit Module(const std::vector<uint8_t>& image) {
    check_cu(driver().cuModuleLoadData(&handle, image.data()), "cuModuleLoadData");
  }
  ~Module() {
    if (handle) driver().cuModuleUnload(handle);
  }
  CUfunction function(const std::string& symbol) const {
    CUfunction f = nullptr;
    check_cu(driver().cuModuleGetFunction(&f, handle, symbol.c_str()), "cuModuleGetFunction");
    return f;
  }
};

struct Engine::Loaded {
  KernelSpec spec;
  std::unique_ptr<Module> module;
  CUfunction fn = nullptr;
  bool compiled = false;  // by this process (else from the cache)
};

}  // namespace i8g
