#include "ops/host/pool2d_blocked.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ops/host/bit_masks.hpp"
#include "ops/host/channel_blocks.hpp"
#include "ops/host/pool2d.hpp"

namespace wt::ops {
namespace {

constexpr int64_t kLanes = kChannelBlock;

bool is_2x2_stride_2(const Pool2dGeometry& g) {
  return g.kernel == 2 && g.stride == 2 && g.padding == 0;
}

// Output pixel p of channel block `block` of sample n in y or dy: where its lane 0 sits, and the
// distance between lanes (1 blocked; a channel plane in NCHW).
struct OutLanes {
  int64_t first, stride;
};
inline OutLanes out_lanes(const Pool2dGeometry& g, bool blocked, int64_t n, int64_t block,
                          int64_t p) {
  const int64_t pixels = g.out_h() * g.out_w();
  return {activation_offset(blocked, g.channels, pixels, n, block * kLanes, p),
          blocked ? 1 : pixels};
}

template <bool kOutBlocked>
void maxpool2x2_forward(const Pool2dGeometry& g, const float* x, float* y) {
  const int64_t Ho = g.out_h(), Wo = g.out_w(), W = g.in_w, blocks = g.channels / kLanes;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t cb = 0; cb < blocks; ++cb) {
      const float* xb = x + (n * blocks + cb) * g.in_h * W * kLanes;
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const float* __restrict a = xb + (2 * oh * W + 2 * ow) * kLanes;
          const float* __restrict c = a + W * kLanes;
          const int64_t p = oh * Wo + ow;
          const OutLanes lanes = out_lanes(g, kOutBlocked, n, cb, p);
          float* __restrict out = y + lanes.first;
          for (int64_t l = 0; l < kLanes; ++l)
            out[(kOutBlocked ? 1 : lanes.stride) * l] =
                std::max(std::max(a[l], a[kLanes + l]), std::max(c[l], c[kLanes + l]));
        }
    }
}

// As pool2d.cpp's branch-free 2x2 backward, lane by lane: all-ones masks select the first maximum.
template <bool kRelu, bool kOutBlocked>
void maxpool2x2_backward(const Pool2dGeometry& g, const float* x, const float* dy, float* dx) {
  const int64_t Ho = g.out_h(), Wo = g.out_w(), W = g.in_w, blocks = g.channels / kLanes;
  const int64_t block_floats = g.in_h * W * kLanes;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t cb = 0; cb < blocks; ++cb) {
      const float* xb = x + (n * blocks + cb) * block_floats;
      float* dxb = dx + (n * blocks + cb) * block_floats;
      // Cells no window covers (an odd width's last column, an odd height's last row) get zero.
      if (W > 2 * Wo || g.in_h > 2 * Ho) std::memset(dxb, 0, sizeof(float) * block_floats);
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          const int64_t at = (2 * oh * W + 2 * ow) * kLanes, below = at + W * kLanes;
          const float* __restrict r0 = xb + at;
          const float* __restrict r1 = xb + below;
          float* __restrict d0 = dxb + at;
          float* __restrict d1 = dxb + below;
          const OutLanes lanes = out_lanes(g, kOutBlocked, n, cb, oh * Wo + ow);
          const float* __restrict from = dy + lanes.first;
          float grad[kLanes];
          for (int64_t l = 0; l < kLanes; ++l) grad[l] = from[(kOutBlocked ? 1 : lanes.stride) * l];
          for (int64_t l = 0; l < kLanes; ++l) {
            const float a = r0[l], b = r0[kLanes + l], c = r1[l], d = r1[kLanes + l];
            const uint32_t top = mask_if(std::max(a, b) >= std::max(c, d));
            const uint32_t left_top = mask_if(a >= b), left_bottom = mask_if(c >= d);
            const float gv =
                kRelu ? masked(mask_if(std::max(std::max(a, b), std::max(c, d)) > 0.0f), grad[l])
                      : grad[l];
            d0[l] = masked(top & left_top, gv);
            d0[kLanes + l] = masked(top & ~left_top, gv);
            d1[l] = masked(~top & left_bottom, gv);
            d1[kLanes + l] = masked(~top & ~left_bottom, gv);
          }
        }
    }
}

}  // namespace

// Any other window or pair of layouts below: relaid to NCHW, pooled by the NCHW kernels, relaid
// back (not LeNet's or VGG's shapes; correct, not fast).

void maxpool2d_forward_blocked(const Pool2dGeometry& g, const float* x, float* y) {
  if (g.x_blocked && is_2x2_stride_2(g)) {
    (g.y_blocked ? maxpool2x2_forward<true> : maxpool2x2_forward<false>)(g, x, y);
    return;
  }
  const int64_t in_pixels = g.in_h * g.in_w, out_pixels = g.out_h() * g.out_w();
  std::vector<float> xs, ys;
  maxpool2d_forward(g.nchw(), nchw_view(x, g.x_blocked, g.batch, g.channels, in_pixels, xs),
                    nchw_result(y, g.y_blocked, g.batch, g.channels, out_pixels, ys));
  store_nchw_result(ys, g.y_blocked, g.batch, g.channels, out_pixels, y);
}

void maxpool2d_backward_blocked(const Pool2dGeometry& g, const float* x, const float* dy, float* dx,
                                bool relu_mask) {
  if (g.x_blocked && is_2x2_stride_2(g)) {
    if (relu_mask)
      (g.y_blocked ? maxpool2x2_backward<true, true> : maxpool2x2_backward<true, false>)(g, x, dy,
                                                                                         dx);
    else
      (g.y_blocked ? maxpool2x2_backward<false, true> : maxpool2x2_backward<false, false>)(g, x, dy,
                                                                                           dx);
    return;
  }
  const int64_t in_pixels = g.in_h * g.in_w, out_pixels = g.out_h() * g.out_w();
  std::vector<float> xs, dys, dxs;
  (relu_mask ? maxpool2d_relu_backward : maxpool2d_backward)(
      g.nchw(), nchw_view(x, g.x_blocked, g.batch, g.channels, in_pixels, xs),
      nchw_view(dy, g.y_blocked, g.batch, g.channels, out_pixels, dys),
      nchw_result(dx, g.x_blocked, g.batch, g.channels, in_pixels, dxs));
  store_nchw_result(dxs, g.x_blocked, g.batch, g.channels, in_pixels, dx);
}

}  // namespace wt::ops
