// Channel-blocked activations on the host (ops/host/channel_blocks.hpp): the relayout itself, and
// the host backend's max pooling and convolution with blocked inputs, outputs and gradients
// against the same calls on NCHW tensors, bit for bit (relaid): what model/block_channels.hpp's
// promise of unchanged losses rests on. Blocked and NCHW sides run the same arithmetic.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "conv_test_util.hpp"
#include "device/device_context.hpp"
#include "ops/host/bf16.hpp"
#include "ops/host/channel_blocks.hpp"
#include "ops/host/host_ops.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

using testing::blocked;
using testing::unblocked;

std::vector<float> random_values(Rng& rng, int64_t n, bool ties) {
  std::vector<float> v(size_t(n), 0.0f);
  // With ties, values from a handful of levels (and zeros, ReLU's edge), so pooling windows
  // often hold equal maxima and the first-maximum rule decides.
  for (float& x : v) x = ties ? float(int(rng.uniform(-3.0f, 3.0f))) : rng.uniform(-1.0f, 1.0f);
  return v;
}

void expect_bitwise(const std::vector<float>& got, const std::vector<float>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " of " << got.size() << " is " << got[i]
                    << ", NCHW gives " << want[i];
      return;
    }
}

TEST(ChannelBlocks, RelayoutPutsSixteenChannelsInnermost) {
  const int64_t n = 2, c = 32, pixels = 5;
  std::vector<float> nchw(size_t(n * c * pixels));
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = float(i);
  const std::vector<float> b = blocked(nchw, n, c, pixels);
  for (int64_t s = 0; s < n; ++s)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < pixels; ++p)
        ASSERT_EQ(b[size_t(ops::activation_offset(true, c, pixels, s, ch, p))],
                  nchw[size_t((s * c + ch) * pixels + p)]);
  EXPECT_EQ(b[1], nchw[pixels]);  // channel 1 of pixel 0 follows channel 0
  EXPECT_EQ(unblocked(b, n, c, pixels), nchw);
  std::vector<float> out(nchw.size());
  EXPECT_THROW(ops::nchw_to_blocked(nchw.data(), n, 20, 8, out.data()), std::invalid_argument);
}

// Max pooling of a blocked input, with the output blocked or NCHW, forward and backward (with and
// without the ReLU mask), against the NCHW kernels.
void check_pool(ops::Pool2dGeometry g, bool out_blocked, bool ties) {
  const HostOps ops;
  Rng rng(7);
  const int64_t n = g.batch, c = g.channels, in_px = g.in_h * g.in_w,
                out_px = g.out_h() * g.out_w();
  const std::string name = std::to_string(g.in_h) + "x" + std::to_string(g.in_w) + " window " +
                           std::to_string(g.kernel) + "/" + std::to_string(g.stride) + "/" +
                           std::to_string(g.padding) +
                           (out_blocked ? ", blocked out" : ", NCHW out");
  const std::vector<float> x = random_values(rng, n * c * in_px, ties);
  const std::vector<float> dy = random_values(rng, n * c * out_px, false);
  ops::Pool2dGeometry gb = g;
  gb.x_blocked = true;
  gb.y_blocked = out_blocked;
  auto out_layout = [&](const std::vector<float>& v) {
    return out_blocked ? unblocked(v, n, c, out_px) : v;
  };
  const std::vector<float> xb = blocked(x, n, c, in_px);
  const std::vector<float> dyb = out_blocked ? blocked(dy, n, c, out_px) : dy;

  std::vector<float> y(dy.size()), yb(dy.size());
  ops.maxpool2d_forward(g, x.data(), y.data());
  ops.maxpool2d_forward(gb, xb.data(), yb.data());
  expect_bitwise(out_layout(yb), y, name + ": forward");
  for (const bool relu : {false, true}) {
    std::vector<float> dx(x.size(), 7.0f), dxb(x.size(), 7.0f);  // 7: cells left unwritten show
    if (relu) {
      ops.maxpool2d_relu_backward(g, x.data(), dy.data(), dx.data());
      ops.maxpool2d_relu_backward(gb, xb.data(), dyb.data(), dxb.data());
    } else {
      ops.maxpool2d_backward(g, x.data(), dy.data(), dx.data());
      ops.maxpool2d_backward(gb, xb.data(), dyb.data(), dxb.data());
    }
    expect_bitwise(unblocked(dxb, n, c, in_px), dx,
                   name + (relu ? ": ReLU backward" : ": backward"));
  }
}

// Geometries as the parity harness writes them: batch, channels, h, w, kernel, stride, padding.
using Pool = ops::Pool2dGeometry;

TEST(ChannelBlocks, MaxPoolingMatchesNchwBitwise) {
  for (const bool out_blocked : {true, false}) {
    check_pool(Pool{3, 32, 28, 28, 2, 2, 0}, out_blocked, false);  // LeNet's pool1
    check_pool(Pool{3, 64, 14, 14, 2, 2, 0}, out_blocked, true);   // pool2, with ties
    check_pool(Pool{2, 16, 7, 9, 2, 2, 0}, out_blocked, true);     // odd: an uncovered edge
    check_pool(Pool{2, 16, 9, 8, 3, 2, 1}, out_blocked, true);     // any other window
  }
}

// A convolution with blocked input and/or output against the NCHW call: output, input gradient,
// weight and bias gradients (accumulated into non-zero gradients).
void check_conv(const ops::Conv2dGeometry& g, Precision precision, const std::string& name) {
  const HostOps ops(precision);
  DeviceContext device;
  const Scratch scratch{&device.allocator(), 0};
  Rng rng(11);
  const int64_t n = g.batch, in_px = g.in_h * g.in_w, out_px = g.out_pixels();
  const std::vector<float> x = random_values(rng, n * g.in_channels * in_px, false);
  const std::vector<float> w =
      random_values(rng, g.out_channels * g.in_channels * g.kernel * g.kernel, false);
  const std::vector<float> bias = random_values(rng, g.out_channels, false);
  const std::vector<float> dy = random_values(rng, n * g.out_channels * out_px, false);
  for (const auto& [in_blocked, out_blocked] :
       {std::pair{true, true}, std::pair{true, false}, std::pair{false, true}}) {
    ops::Conv2dGeometry gb = g;
    gb.x_blocked = in_blocked && ops::channels_blockable(g.in_channels);
    gb.y_blocked = out_blocked;
    const std::string what = name + (gb.x_blocked ? ", blocked in" : ", NCHW in") +
                             (out_blocked ? ", blocked out" : ", NCHW out");
    auto in_of = [&](const std::vector<float>& v) {
      return gb.x_blocked ? blocked(v, n, g.in_channels, in_px) : v;
    };
    auto out_of = [&](const std::vector<float>& v) {
      return out_blocked ? blocked(v, n, g.out_channels, out_px) : v;
    };
    std::vector<float> y(dy.size()), yb(dy.size());
    ops.conv2d_forward(g, x.data(), w.data(), bias.data(), y.data(), scratch);
    ops.conv2d_relu_forward(gb, in_of(x).data(), w.data(), bias.data(), yb.data(), scratch);
    for (float& v : y) v = v > 0.0f ? v : 0.0f;  // relu(-0) and relu(0) are +0 either way
    expect_bitwise(out_blocked ? unblocked(yb, n, g.out_channels, out_px) : yb, y,
                   what + ": forward with ReLU");
    std::vector<float> dx(x.size()), dxb(x.size()), dw(w.size(), 0.5f), dwb(w.size(), 0.5f),
        db(bias.size(), 0.25f), dbb(bias.size(), 0.25f);
    ops.conv2d_backward(g, x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), scratch);
    ops.conv2d_backward(gb, in_of(x).data(), w.data(), out_of(dy).data(), dxb.data(), dwb.data(),
                        dbb.data(), scratch);
    expect_bitwise(gb.x_blocked ? unblocked(dxb, n, g.in_channels, in_px) : dxb, dx,
                   what + ": input gradient");
    expect_bitwise(dwb, dw, what + ": weight gradient");
    expect_bitwise(dbb, db, what + ": bias gradient");
  }
}

// Batch, in channels, h, w, out channels, kernel, stride, padding.
using Conv = ops::Conv2dGeometry;

TEST(ChannelBlocks, ConvolutionMatchesNchwBitwise) {
  check_conv(Conv{4, 1, 28, 28, 32, 5, 1, 2}, Precision::Fp32, "LeNet conv1");
  check_conv(Conv{4, 32, 14, 14, 64, 5, 1, 2}, Precision::Fp32, "LeNet conv2");
  // A stride that skips the last input rows: oneDNN has no kernel, im2col runs on NCHW copies.
  check_conv(Conv{2, 16, 8, 8, 16, 3, 2, 0}, Precision::Fp32, "im2col fallback");
}

TEST(ChannelBlocks, Bf16ConvolutionMatchesNchwBitwise) {
  if (!ops::host_computes_bf16()) GTEST_SKIP() << "this CPU has no bf16 arithmetic";
  // The blocked input is rounded in place order (no relayout), the NCHW one by to_bf16_nchw16c.
  check_conv(Conv{4, 32, 14, 14, 64, 5, 1, 2}, Precision::Bf16, "LeNet conv2 in bf16");
}

}  // namespace
}  // namespace wt
