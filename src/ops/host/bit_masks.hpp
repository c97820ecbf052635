#pragma once
// Branch-free selection for the pooling kernels (pool2d.cpp, pool2d_blocked.cpp): mask_if gives
// all-ones when `condition`, else zero; combined with & and applied by masked(), a window loop has
// no branches (GCC turns float ?: and && chains into jumps, and which cell of a pooling window
// wins is unpredictable).
#include <cstdint>
#include <cstring>

namespace wt::ops {

inline uint32_t mask_if(bool condition) { return 0u - static_cast<uint32_t>(condition); }
inline float masked(uint32_t mask, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= mask;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace wt::ops
