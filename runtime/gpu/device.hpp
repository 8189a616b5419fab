// What the engine learns about its device: arch, budgets, name, driver version.
#pragma once
#include <cuda.h>

#include <string>

#include "core/target.hpp"

namespace i8g {

struct DeviceInfo {
  int ordinal = 0;
  CUdevice device = 0;
  std::string name;
  int cc = 0;  // major*10+minor
  std::string driver_version;  // "13.0"
  std::string pci_bus_id;      // "0000:19:00.0" (NVML finds the same board by it)
  Target target;               // arch (sm_90a on cc 9.0) and the device's real budgets
};

// Queries device `ordinal`; throws Error (no_device, invalid_argument, unsupported).
DeviceInfo query_device(int ordinal);
// How many CUDA devices the driver sees; 0 (and why, when asked) without a driver or device.
int cuda_device_count(std::string* why = nullptr);

}  // namespace i8g
