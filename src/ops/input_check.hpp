#pragma once
// The messages for bad inputs that kernels find (every backend's, and the executor's when it reads
// a device-side check back: ops/portable/rows.hpp's InputCheck).
#include <cstdint>
#include <string>

namespace wt::ops {

// A token id that is not an integer in [0, vocab).
std::string token_id_error(float value, int64_t position, int64_t vocab);

}  // namespace wt::ops
