#include "runtime/gpu/clock_sampler.hpp"

#include <dlfcn.h>

#include <chrono>

namespace i8g {
namespace {

// The few NVML entry points used (a stable C ABI; the toolkit on CPU machines has no nvml.h).
using Device = void*;
constexpr unsigned kClockSm = 1;   // NVML_CLOCK_SM
constexpr unsigned kClockMem = 2;  // NVML_CLOCK_MEM
struct Nvml {
  int (*init)() = nullptr;
  int (*by_bus_id)(const char*, Device*) = nullptr;
  int (*clock)(Device, unsigned, unsigned*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  std::string why;
};

const Nvml& nvml() {
  static const Nvml loaded = [] {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      n.why = "libnvidia-ml.so.1 could not be opened";
      return n;
    }
    n.init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.by_bus_id = reinterpret_cast<int (*)(const char*, Device*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock = reinterpret_cast<int (*)(Device, unsigned, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    n.power = reinterpret_cast<int (*)(Device, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    if (!n.init || !n.by_bus_id || !n.clock || !n.power) n.why = "libnvidia-ml.so.1 lacks an entry point";
    else if (n.init() != 0) n.why = "nvmlInit failed";
    return n;
  }();
  return loaded;
}

}  // namespace

ClockSampler::ClockSampler(const std::string& pci_bus_id) {
  const Nvml& n = nvml();
  if (!n.why.empty()) {
    why_ = n.why;
    return;
  }
  Device d = nullptr;
  if (n.by_bus_id(pci_bus_id.c_str(), &d) != 0 || !d) {
    why_ = "NVML does not know the device at PCI " + pci_bus_id;
    return;
  }
  device_ = d;
}

ClockSampler::~ClockSampler() {
  if (thread_.joinable()) stop();
}

ClockReading ClockSampler::now() const {
  ClockReading r;
  if (!device_) return r;
  unsigned mhz = 0, mw = 0;
  if (nvml().clock(device_, kClockSm, &mhz) == 0 && nvml().power(device_, &mw) == 0) {
    r.sm_mhz = mhz;
    r.power_w = mw / 1000.0;
    r.samples = 1;
    unsigned mem = 0;
    if (nvml().clock(device_, kClockMem, &mem) == 0) r.mem_mhz = mem;
  }
  return r;
}

void ClockSampler::start() {
  if (!device_ || thread_.joinable()) return;
  mhz_sum_ = w_sum_ = mem_sum_ = 0;
  count_ = 0;
  running_ = true;
  thread_ = std::thread([this] {
    while (running_) {
      const ClockReading r = now();
      if (r.samples) {
        mhz_sum_ += r.sm_mhz;
        w_sum_ += r.power_w;
        mem_sum_ += r.mem_mhz;
        ++count_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
}

ClockReading ClockSampler::stop() {
  ClockReading r;
  if (!thread_.joinable()) return r;
  running_ = false;
  thread_.join();
  if (count_ > 0) {
    r.sm_mhz = mhz_sum_ / count_;
    r.power_w = w_sum_ / count_;
    r.mem_mhz = mem_sum_ / count_;
    r.samples = count_;
  }
  return r;
}

}  // namespace i8g
