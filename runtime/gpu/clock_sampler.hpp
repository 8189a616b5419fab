// The SM and memory clocks and board power while something runs, read from NVML (libnvidia-ml.so.1,
// opened with dlopen like libcuda) by a thread that polls about once a millisecond. Benchmarks
// report the clock each contender ran at: on the H200 the 700 W cap, not the datasheet, sets
// the clock under int8 load (../docs/performance.md).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace i8g {

struct ClockReading {
  double sm_mhz = 0, power_w = 0;  // means over the samples; 0 when none was taken
  int samples = 0;
  double mem_mhz = 0;  // the memory clock's mean (HBM; it may step down while the GPU idles)
};

class ClockSampler {
 public:
  // `pci_bus_id` as cuDeviceGetPCIBusId writes it. Never throws: without NVML (or the
  // device), available() is false, why() says why, and stop() returns an empty reading.
  explicit ClockSampler(const std::string& pci_bus_id);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& why() const { return why_; }
  void start();
  ClockReading stop();
  // One reading now, outside start/stop (e.g. the idle clock).
  ClockReading now() const;

 private:
  void* device_ = nullptr;
  std::string why_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  double mhz_sum_ = 0, w_sum_ = 0, mem_sum_ = 0;
  int count_ = 0;
};

}  // namespace i8g
