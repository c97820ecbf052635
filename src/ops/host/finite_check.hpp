#pragma once
// Scans for NaN and Inf in float buffers (the non-finite gradient check).
#include <cstdint>

namespace wt {

// True when every value of data[0, count) is finite. Reads the buffer once with no early exit,
// so it vectorises: about the cost of one read of the buffer.
bool all_finite(const float* data, int64_t count);
// Number of NaN/Inf values in data[0, count) (for messages; not vectorised).
int64_t count_nonfinite(const float* data, int64_t count);

}  // namespace wt
