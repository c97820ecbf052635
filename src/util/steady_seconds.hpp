#pragma once
// The clock of the executor's observers, traces and the multiplexer's tasklet log: steady_clock
// (CLOCK_MONOTONIC) seconds since its epoch, so their times line up within a node.
#include <chrono>

namespace wt {

inline double steady_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

}  // namespace wt
