#pragma once
// Timing helpers of the single-core host kernel benches (conv2d_dnnl.cpp, conv2d_winograd.cpp):
// deterministic inputs, and the best of several runs in this thread's CPU time.
#include <algorithm>
#include <ctime>
#include <functional>
#include <vector>

namespace bench {

inline std::vector<float> randoms(size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
  return v;
}

// This thread's CPU time in ms: on a shared machine, wall time mostly measures the others.
inline double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Best of `reps` runs of fn (after one warm-up run), in ms of thread CPU time.
inline double best_ms(int reps, const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double c0 = thread_cpu_ms();
    fn();
    best = std::min(best, thread_cpu_ms() - c0);
  }
  return best;
}

}  // namespace bench
