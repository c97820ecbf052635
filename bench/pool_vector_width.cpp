// LeNet's 2x2 max-pooling (pool1 [64, 32, 28, 28], pool2 [64, 64, 14, 14]) forward and fused
// ReLU backward on one core, as compiled into this binary (pool_vector_width.sh builds it with
// and without -mprefer-vector-width=128). Prints the fastest of `reps` runs of each, and a
// checksum of the gradients, which must match between builds (the arithmetic is selects only).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ops/host/pool2d.hpp"

namespace {

double fastest(int reps, const auto& work) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 100;
  Kokkos::initialize(argc, argv);
  {
    for (const auto& [name, channels, side] : {std::tuple{"pool1", 32, 28}, {"pool2", 64, 14}}) {
      wt::ops::Pool2dGeometry g{};
      g.batch = 64;
      g.channels = channels;
      g.in_h = g.in_w = side;
      g.kernel = g.stride = 2;
      const size_t n = size_t(g.batch) * channels * side * side;
      std::vector<float> x(n), dy(n / 4), dx(n), y(n / 4);
      std::mt19937 rng(1);
      std::normal_distribution<float> normal;
      for (float& v : x) v = std::max(0.0f, normal(rng));  // a ReLU's output
      for (float& v : dy) v = normal(rng);
      const double fwd = fastest(reps, [&] { wt::ops::maxpool2d_forward(g, x.data(), y.data()); });
      const double bwd = fastest(
          reps, [&] { wt::ops::maxpool2d_relu_backward(g, x.data(), dy.data(), dx.data()); });
      double checksum = 0;
      for (float v : dx) checksum += v;
      std::printf("| %s | %.0f | %.0f | %.6f |\n", name, fwd * 1e6, bwd * 1e6, checksum);
    }
  }
  Kokkos::finalize();
}
