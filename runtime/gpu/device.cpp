#include "runtime/gpu/device.hpp"

#include <fmt/format.h>

#include "runtime/gpu/cuda_driver.hpp"

namespace i8g {

int cuda_device_count(std::string* why) {
  std::string w;
  const Driver* d = Driver::get(&w);
  int count = 0;
  if (d && d->cuDeviceGetCount(&count) != CUDA_SUCCESS) count = 0, w = "cuDeviceGetCount failed";
  if (why) *why = w;
  return count;
}

DeviceInfo query_device(int ordinal) {
  std::string why;
  const Driver* d = Driver::get(&why);
  if (!d) throw Error(ErrorKind::no_device, "i8gemm_create", why);
  int count = 0;
  check_cu(d->cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw Error(ErrorKind::invalid_argument, "i8gemm_create",
                   fmt::format("device {} does not exist ({} CUDA device(s))", ordinal, count));
  DeviceInfo info;
  info.ordinal = ordinal;
  check_cu(d->cuDeviceGet(&info.device, ordinal), "cuDeviceGet");
  char name[256] = {};
  check_cu(d->cuDeviceGetName(name, sizeof(name) - 1, info.device), "cuDeviceGetName");
  info.name = name;
  char bus[32] = {};
  if (d->cuDeviceGetPCIBusId(bus, sizeof(bus) - 1, info.device) == CUDA_SUCCESS) info.pci_bus_id = bus;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    check_cu(d->cuDeviceGetAttribute(&v, a, info.device), "cuDeviceGetAttribute");
    return v;
  };
  info.cc = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  // sm_90 devices get the arch-specific target (wgmma, setmaxnreg need it).
  const std::string arch = fmt::format("sm_{}{}", info.cc, info.cc == 90 ? "a" : "");
  try {
    info.target = Target::from_arch(arch);
  } catch (const Error& e) {
    throw Error(ErrorKind::unsupported, "i8gemm_create",
                   fmt::format("{} (compute capability {}.{}): {}", info.name, info.cc / 10,
                               info.cc % 10, e.message()));
  }
  Target& t = info.target;
  t.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  t.smem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  t.smem_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  t.regs_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  t.max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  t.max_blocks_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  int v = 0;
  check_cu(d->cuDriverGetVersion(&v), "cuDriverGetVersion");
  info.driver_version = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
  return info;
}

}  // namespace i8g
