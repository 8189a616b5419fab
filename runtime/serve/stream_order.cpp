#include "runtime/serve/stream_order.hpp"

#include "runtime/gpu/cuda_driver.hpp"

namespace i8g {
namespace {

bool capturing(CUstream stream) {
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  check_cu(driver().cuStreamIsCapturing(stream, &cs), "cuStreamIsCapturing");
  return cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace

StreamOrder::StreamOrder() {
  check_cu(driver().cuEventCreate(&done_, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
}

StreamOrder::~StreamOrder() {
  if (done_) driver().cuEventDestroy(done_);
}

void StreamOrder::before(CUstream stream) {
  if (!used_ || stream == last_ || captured_ || capturing(stream)) return;
  check_cu(driver().cuStreamWaitEvent(stream, done_, 0), "cuStreamWaitEvent");
}

void StreamOrder::after(CUstream stream) {
  captured_ = capturing(stream);
  check_cu(driver().cuEventRecord(done_, stream), "cuEventRecord");
  last_ = stream;
  used_ = true;
}

}  // namespace i8g
