// The step's results come back in one staged copy: every reader of one step's results shares it,
// an evaluation copies afresh, and a region reserved after the first device use is refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "device/device_context.hpp"
#include "exec/step_readback.hpp"

namespace {

using wt::DeviceContext;
using wt::DeviceKind;

TEST(StepReadback, ReadersOfOneStepShareOneCopy) {
  DeviceContext device(0, DeviceKind::Strict, 1);
  wt::StepReadback readback(device.allocator());
  const int64_t totals = readback.reserve(4, "totals"), counts = readback.reserve(2, "counts");
  EXPECT_EQ(counts, 4);
  for (int64_t step = 0; step < 3; ++step) {
    device.ops(0).fill(float(step), readback.device_ptr(totals), 4);
    device.ops(1).fill(float(10 + step), readback.device_ptr(counts), 2);
    const uint64_t before = device.queues()->synchronizations();
    EXPECT_EQ(readback.host(totals, step)[3], float(step));
    EXPECT_EQ(readback.host(counts, step)[1], float(10 + step));
    EXPECT_EQ(device.queues()->synchronizations() - before, 1u) << "one wait for step " << step;
  }
  device.ops(0).fill(7.0f, readback.device_ptr(totals), 4);
  EXPECT_EQ(readback.host(totals, -1)[0], 7.0f) << "an evaluation's results: a fresh copy";
  EXPECT_THROW(readback.reserve(1, "late"), std::logic_error);
}

}  // namespace
