// Times LeNet's convolutions (batch 64, one core) four ways: the im2col + GEMM path, oneDNN
// convolution primitives on plain nchw/oihw, oneDNN primitives in the layouts it picks
// (format_tag::any) with reorders at the NCHW boundary, and those in bf16 (train.precision); then
// the bf16 rounding into the blocked layout. Times are this thread's CPU time, best of
// `repetitions`. Built and run by conv2d_dnnl.sh.
// Usage: conv2d_dnnl [repetitions]
#include "ops/host/conv2d_dnnl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dnnl.hpp>
#include <functional>
#include <vector>

#include "host_bench_timing.hpp"
#include "ops/host/bf16.hpp"
#include "ops/host/conv2d.hpp"

using namespace wt::ops;

namespace {

using bench::best_ms;
using bench::randoms;

Conv2dGeometry conv(int64_t batch, int64_t c, int64_t hw, int64_t oc) {
  Conv2dGeometry g;
  g.batch = batch;
  g.in_channels = c;
  g.in_h = g.in_w = hw;
  g.out_channels = oc;
  g.kernel = 5;
  g.padding = 2;
  return g;
}

struct DnnlPath {
  const char* name;
  DnnlConvLayout layout;
  wt::Precision precision;
};
const DnnlPath kDnnlPaths[] = {
    {"oneDNN nchw", DnnlConvLayout::kPlain, wt::Precision::Fp32},
    {"oneDNN any", DnnlConvLayout::kBlocked, wt::Precision::Fp32},
    {"oneDNN any, bf16", DnnlConvLayout::kBlocked, wt::Precision::Bf16},
};

// train.precision = "bf16" rounds each convolution input into oneDNN's nChw16c layout: oneDNN's
// own reorder against to_bf16_nchw16c (what conv2d_dnnl runs), and oneDNN's FP32-to-FP32 reorder
// into the same layout for scale. LeNet's three such tensors at batch 64.
void time_bf16_rounding(int reps) {
  using dnnl::memory;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::printf(
      "\n| tensor | oneDNN reorder to bf16 ms | to_bf16_nchw16c ms | oneDNN reorder FP32 ms |\n"
      "|---|---|---|---|\n");
  for (const memory::dims& d :
       {memory::dims{64, 32, 28, 28}, memory::dims{64, 64, 14, 14}, memory::dims{64, 32, 14, 14}}) {
    memory from({d, memory::data_type::f32, memory::format_tag::nchw}, engine);
    memory to_bf16({d, memory::data_type::bf16, memory::format_tag::nChw16c}, engine);
    memory to_f32({d, memory::data_type::f32, memory::format_tag::nChw16c}, engine);
    const auto x = randoms(size_t(d[0] * d[1] * d[2] * d[3]), 5);
    std::copy(x.begin(), x.end(), static_cast<float*>(from.get_data_handle()));
    const dnnl::reorder by_dnnl(from, to_bf16), by_dnnl_f32(from, to_f32);
    const double a = best_ms(reps, [&] {
      by_dnnl.execute(stream, from, to_bf16);
      stream.wait();
    });
    const double b = best_ms(reps, [&] {
      to_bf16_nchw16c(x.data(), d[0], d[1], d[2] * d[3],
                      static_cast<uint16_t*>(to_bf16.get_data_handle()));
    });
    const double c = best_ms(reps, [&] {
      by_dnnl_f32.execute(stream, from, to_f32);
      stream.wait();
    });
    std::printf("| %ldx%ldx%ldx%ld | %.3f | %.3f | %.3f |\n", long(d[0]), long(d[1]), long(d[2]),
                long(d[3]), a, b, c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  std::printf("| conv | path | forward ms | backward ms (dw, db%s) |\n|---|---|---|---|\n", "");
  int which = 0;
  for (const Conv2dGeometry& g : {conv(64, 1, 28, 32), conv(64, 32, 14, 64)}) {
    ++which;
    // The first conv needs no input gradient (the executor passes din = nullptr for the input).
    const bool need_dx = which > 1;
    auto x = randoms(g.batch * g.in_channels * g.in_h * g.in_w, 1);
    auto w = randoms(g.out_channels * g.col_rows(), 2), b = randoms(g.out_channels, 3);
    auto dy = randoms(g.batch * g.out_channels * g.out_pixels(), 4);
    std::vector<float> y(dy.size()), dx(x.size()), dw(w.size()), db(b.size());
    float* dxp = need_dx ? dx.data() : nullptr;
    const int64_t chunk = conv2d_chunk(g);
    std::vector<float> ws(conv2d_workspace_floats(g, chunk));
    const double f0 = best_ms(
        reps, [&] { conv2d_forward(g, x.data(), w.data(), b.data(), y.data(), ws.data(), chunk); });
    const double b0 = best_ms(reps, [&] {
      conv2d_backward(g, x.data(), w.data(), dy.data(), dxp, dw.data(), db.data(), ws.data(),
                      chunk);
    });
    std::printf("| conv%d | im2col | %.2f | %.2f |\n", which, f0, b0);
    for (const DnnlPath& path : kDnnlPaths) {
      if (!conv2d_dnnl_supports(g, true, path.layout, path.precision)) {
        std::printf("| conv%d | %s | unsupported | |\n", which, path.name);
        continue;
      }
      const double f = best_ms(reps, [&] {
        conv2d_dnnl_forward(g, x.data(), w.data(), b.data(), y.data(), path.layout, false,
                            path.precision);
      });
      const double bk = best_ms(reps, [&] {
        conv2d_dnnl_backward(g, x.data(), w.data(), dy.data(), dxp, dw.data(), db.data(),
                             path.layout, path.precision);
      });
      std::printf("| conv%d | %s | %.2f | %.2f |\n", which, path.name, f, bk);
    }
  }
  time_bf16_rounding(reps);
  return 0;
}
