// Device memory owned by RAII (driver API), for prepare-time workspaces, the autotuner and tests.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/gpu/cuda_driver.hpp"

namespace i8g {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws an out_of_memory Error naming the size when the device has not that much left.
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (!bytes) return;
    try {
      I8G_CU(cuMemAlloc(&ptr_, bytes));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::out_of_memory) throw;
      throw Error(ErrorKind::out_of_memory, e.where(), "could not allocate " + std::to_string((bytes + (1 << 20) - 1) >> 20) +
                                             " MiB (" + std::to_string(bytes) + " bytes): " + e.message());
    }
  }
  ~DeviceBuffer() {
    if (ptr_) driver().cuMemFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class T = void>
  T* get() const { return reinterpret_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  void upload(const void* src, size_t n) { I8G_CU(cuMemcpyHtoD(ptr_, src, n)); }
  template <class T>
  void upload(const std::vector<T>& v) { upload(v.data(), v.size() * sizeof(T)); }
  void download(void* dst, size_t n) const { I8G_CU(cuMemcpyDtoH(dst, ptr_, n)); }
  void fill(uint8_t byte) { I8G_CU(cuMemsetD8(ptr_, byte, bytes_)); }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Device memory cleared before any stream can use it (split-K counters must start at zero):
// the clear runs on the legacy stream, so the context is synchronized before returning.
inline DeviceBuffer zeroed_device_buffer(size_t bytes) {
  DeviceBuffer b(bytes);
  if (bytes) {
    b.fill(0);
    I8G_CU(cuCtxSynchronize());
  }
  return b;
}

}  // namespace i8g
