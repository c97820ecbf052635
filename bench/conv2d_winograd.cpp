// LeNet's conv2 (32 -> 64 channels, 5x5, padding 2, 14x14, nChw16c in and out) on one core two
// ways: oneDNN's direct convolution (what the layer runs by default) and F(2x2, 5x5) Winograd
// (device.conv_algorithm = "auto"), forward, input gradient and weight gradient separately, at
// the batch of one rank (64) and of each of two ranks (32). Prints this thread's CPU time, best of
// `repetitions`, and the largest difference between the two paths' results relative to the
// largest magnitude. Built and run by conv2d_winograd.sh.
// Usage: conv2d_winograd [repetitions]
#include "ops/host/conv2d_winograd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

#include "host_bench_timing.hpp"
#include "ops/host/conv2d_dnnl.hpp"

using namespace wt::ops;

namespace {

using bench::best_ms;
using bench::randoms;

// max |a - b| / max |b|
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

void compare(int64_t batch, int reps) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_channels = 32;
  g.in_h = g.in_w = 14;
  g.out_channels = 64;
  g.kernel = 5;
  g.padding = 2;
  g.x_blocked = g.y_blocked = true;
  const size_t xs = batch * 32 * 196, ws = 64 * 32 * 25, ys = batch * 64 * 196;
  const auto x = randoms(xs, 1), w = randoms(ws, 2), bias = randoms(64, 3), dy = randoms(ys, 4);
  std::vector<float> y[2], dx[2], dw[2], db[2];
  double ms[2][3];
  for (int path = 0; path < 2; ++path) {
    y[path].assign(ys, 0.f);
    dx[path].assign(xs, 0.f);
    dw[path].assign(ws, 0.f);
    db[path].assign(64, 0.f);
    const bool wino = path == 1;
    ms[path][0] = best_ms(reps, [&] {
      if (wino)
        conv2d_winograd_forward(g, x.data(), w.data(), bias.data(), y[path].data(), true);
      else
        conv2d_dnnl_forward(g, x.data(), w.data(), bias.data(), y[path].data(),
                            DnnlConvLayout::kBlocked, true);
    });
    ms[path][1] = best_ms(reps, [&] {
      if (wino)
        conv2d_winograd_backward(g, x.data(), w.data(), dy.data(), dx[path].data(), nullptr,
                                 nullptr);
      else
        conv2d_dnnl_backward(g, x.data(), w.data(), dy.data(), dx[path].data(), nullptr, nullptr);
    });
    ms[path][2] = best_ms(reps, [&] {
      std::fill(dw[path].begin(), dw[path].end(), 0.f);
      std::fill(db[path].begin(), db[path].end(), 0.f);
      if (wino)
        conv2d_winograd_backward(g, x.data(), w.data(), dy.data(), nullptr, dw[path].data(),
                                 db[path].data());
      else
        conv2d_dnnl_backward(g, x.data(), w.data(), dy.data(), nullptr, dw[path].data(),
                             db[path].data());
    });
  }
  const char* names[] = {"forward + bias + ReLU", "input gradient", "weight + bias gradient"};
  const double diffs[] = {relative_difference(y[1], y[0]), relative_difference(dx[1], dx[0]),
                          relative_difference(dw[1], dw[0])};
  for (int pass = 0; pass < 3; ++pass)
    std::printf("| %lld | %s | %.2f | %.2f | %.2fx | %.1e |\n", static_cast<long long>(batch),
                names[pass], ms[0][pass], ms[1][pass], ms[0][pass] / ms[1][pass], diffs[pass]);
  std::printf("| %lld | all three | %.2f | %.2f | %.2fx | |\n", static_cast<long long>(batch),
              ms[0][0] + ms[0][1] + ms[0][2], ms[1][0] + ms[1][1] + ms[1][2],
              (ms[0][0] + ms[0][1] + ms[0][2]) / (ms[1][0] + ms[1][1] + ms[1][2]));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::printf(
      "| batch | pass | oneDNN direct ms | Winograd F(2x2,5x5) ms | speed-up | max rel. diff |\n"
      "|---:|---|---:|---:|---:|---:|\n");
  for (int64_t batch : {64, 32}) compare(batch, reps);
}
