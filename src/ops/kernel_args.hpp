#pragma once
// The arguments of the kernels that several backends implement (ops/ops.hpp): shapes and update
// coefficients, plain values that mean the same on every device.
#include <cstdint>
#include <cstring>

#include "ops/portable/portable.hpp"  // WT_HD: the geometry is read by device code too

namespace wt::ops {

// Channels per block of the channel-blocked activation layout (nChw16c;
// ops/host/channel_blocks.hpp).
constexpr int64_t kChannelBlock = 16;
inline bool channels_blockable(int64_t channels) {
  return channels > 0 && channels % kChannelBlock == 0;
}

struct Conv2dGeometry {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, kernel = 1, stride = 1, padding = 0;
  WT_HD int64_t out_h() const { return (in_h + 2 * padding - kernel) / stride + 1; }
  WT_HD int64_t out_w() const { return (in_w + 2 * padding - kernel) / stride + 1; }
  WT_HD int64_t col_rows() const { return in_channels * kernel * kernel; }  // GEMM K of the forward
  WT_HD int64_t out_pixels() const { return out_h() * out_w(); }
  // Activations in oneDNN's channel-blocked layout (nChw16c: [N][C/16][H][W][16]) instead of NCHW:
  // x and dx, y and dy. Host ranks only, set by model/block_channels.hpp.
  bool x_blocked = false, y_blocked = false;
  // The same geometry over NCHW tensors (the fallbacks that relay blocked ones).
  Conv2dGeometry nchw() const {
    Conv2dGeometry g = *this;
    g.x_blocked = g.y_blocked = false;
    return g;
  }
};

struct Pool2dGeometry {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0;
  int64_t kernel = 1, stride = 1, padding = 0;
  WT_HD int64_t out_h() const { return (in_h + 2 * padding - kernel) / stride + 1; }
  WT_HD int64_t out_w() const { return (in_w + 2 * padding - kernel) / stride + 1; }
  bool x_blocked = false, y_blocked = false;  // as Conv2dGeometry's
  Pool2dGeometry nchw() const {
    Pool2dGeometry g = *this;
    g.x_blocked = g.y_blocked = false;
    return g;
  }
};

struct BatchNormShape {
  int64_t n = 0;   // batch
  int64_t c = 0;   // channels
  int64_t hw = 0;  // spatial size H*W
};

struct XentStats {
  double loss_sum = 0.0;  // sum over rows of -log softmax(x)[label]
  int64_t correct = 0;    // rows whose first argmax equals the label
};

// Where the loss kernel leaves its results, in device memory: the loss layer's output
// loss_scale * sum * per_row, and the step's totals, += sum * per_row and += correct * per_row.
struct XentOutputs {
  double per_row = 1.0;  // 1 / tokens per sample
  float loss_scale = 1.0f;
  float* loss = nullptr;     // [1]
  double* totals = nullptr;  // [2]: loss sum, correct predictions
};

// A count in device memory (count_nonfinite_into's result, the optimizer updates' skip flag): a
// double in kCountFloats consecutive floats. Exact to 2^53, so the flag is nonzero exactly when the
// count is; read as one float, a double's low half would be 0 for small counts.
constexpr int64_t kCountFloats = 2;
WT_HD double load_count(const float* p) {
#if defined(__CUDA_ARCH__)
  // Two float loads: a count may sit at an odd float offset inside a larger tensor.
  return __hiloint2double(__float_as_int(p[1]), __float_as_int(p[0]));
#else
  double c;
  std::memcpy(&c, p, sizeof c);
  return c;
#endif
}
WT_HD void store_count(float* p, double c) {
#if defined(__CUDA_ARCH__)
  p[0] = __int_as_float(__double2loint(c));
  p[1] = __int_as_float(__double2hiint(c));
#else
  std::memcpy(p, &c, sizeof c);
#endif
}

// per_step: nullptr, or device memory the kernel reads the values that change from step to step
// from, in place of the fields (SGD: lr; AdamW: decay, step_size, bias2_sqrt), so that a captured
// graph's update reads each replay's values (ops/per_step_values.hpp).
struct SgdUpdate {
  float lr = 0, weight_decay = 0, momentum = 0;
  bool first = false, nesterov = false;  // first: the first-step rule (read from per_step if set)
  const float* per_step = nullptr;
};
constexpr int kSgdPerStep = 2;  // lr, and first (1 or 0): SGD's first-step rule

struct AdamWUpdate {
  float decay = 1, b1 = 0, one_minus_b1 = 1, b2 = 0, one_minus_b2 = 1;
  float step_size = 0, bias2_sqrt = 1, eps = 0;
  const float* per_step = nullptr;
};
constexpr int kAdamWPerStep = 3;

// Inverted-dropout masks of `rows` consecutive samples, `per_row` entries each: sample s draws
// from its own seed, Rng(key ^ salt).fork(s).state() (model/layers/dropout.cpp), so its mask is
// the same whichever rank and part computes it. key: the batch generator's state; step_key:
// nullptr, or pinned host memory holding it, read when the kernel runs, so that a captured graph
// draws each replay's masks (exec/executor_graphs.cpp).
struct DropoutMasks {
  float p = 0;
  uint64_t key = 0, salt = 0;
  const uint64_t* step_key = nullptr;
  int64_t first_sample = 0, rows = 0, per_row = 0;
};

}  // namespace wt::ops
