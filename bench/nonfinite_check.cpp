// Cost of the per-step non-finite gradient check (NonFiniteGuard) against the optimizer step it
// guards, on the gradient sizes of the shipped models (mlp 269,322, resnet 308k, lenet 857,738
// parameters). Prints best-of-N wall time per call in microseconds.
// Usage: nonfinite_check [repetitions]   (built by bench/nonfinite_check.sh)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ops/host/finite_check.hpp"

namespace {
template <typename F>
double best_us(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best,
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  std::printf("%-10s %10s %14s %22s %8s\n", "model", "floats", "all_finite us",
              "sgd momentum step us", "ratio");
  for (auto [name, n] : {std::pair<const char*, long>{"mlp", 269322}, {"lenet", 857738}}) {
    std::vector<float> g(n), w(n), m(n);
    for (long i = 0; i < n; ++i) g[i] = 1e-3f * float(i % 977) - 0.4f;
    volatile bool sink = false;
    const double check = best_us(reps, [&] { sink = wt::all_finite(g.data(), n); });
    // The update the check guards: momentum SGD with weight decay (reads g, w, m; writes w, m).
    const double step = best_us(reps, [&] {
      for (long i = 0; i < n; ++i) {
        m[i] = 0.9f * m[i] + g[i] + 5e-4f * w[i];
        w[i] -= 0.05f * m[i];
      }
    });
    std::printf("%-10s %10ld %14.1f %22.1f %8.2f\n", name, n, check, step, check / step);
    (void)sink;
  }
}
