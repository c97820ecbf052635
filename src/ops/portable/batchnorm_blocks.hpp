#pragma once
// Batch normalisation in the GPU's block form (ops/cuda/cuda_batchnorm.cu): each channel's
// n * hw values are a segment of a tree_reduce.hpp SegmentPlan, cut into chunks that many blocks
// share, where the host's form (batchnorm.hpp) gives one thread a whole channel. A thread's values
// are the flat indices k = first, first + stride, ... of its channel, k = sample * hw + pixel; the
// statistics and sums come out of the tree, and the same formulas as the host's finish them
// (BatchNormStatistics::store, BatchNormBackward::dx_terms), so only the order of the sums differs.
#include "ops/portable/batchnorm.hpp"
#include "ops/portable/tree_reduce.hpp"

namespace wt::kern {

// Walks channel c's NCHW offsets for k = first, first + stride, ... without a division per value.
struct ChannelCursor {
  int64_t offset = 0, pixel = 0, hw = 1;
  int64_t step_pixels = 0, step_offset = 0, wrap = 0;
  WT_HD ChannelCursor(const ops::BatchNormShape& s, int64_t c, int64_t first, int64_t stride)
      : hw(s.hw) {
    const int64_t sample = first / s.hw, plane = s.c * s.hw;
    pixel = first - sample * s.hw;
    offset = sample * plane + c * s.hw + pixel;
    const int64_t step_samples = stride / s.hw;
    step_pixels = stride - step_samples * s.hw;
    step_offset = step_samples * plane + step_pixels;
    wrap = plane - s.hw;  // past the row's end: the next sample's row of this channel
  }
  WT_HD void next() {
    pixel += step_pixels;
    offset += step_offset;
    if (pixel >= hw) {
      pixel -= hw;
      offset += wrap;
    }
  }
};

// A thread's count, mean and squared deviations of its values of channel c (two passes over its
// own values: the second reads what the first just brought into cache).
struct BatchNormMomentsShare {
  const float* x;
  ops::BatchNormShape s;
  WT_HD Moments operator()(int64_t c, int64_t first, int64_t end, int64_t stride) const {
    if (first >= end) return Moments{};
    float sum = 0.0f;
    int64_t count = 0;
    ChannelCursor at(s, c, first, stride);
    for (int64_t k = first; k < end; k += stride, at.next(), ++count) sum += x[at.offset];
    const float mean = sum / static_cast<float>(count);
    float m2 = 0.0f;
    ChannelCursor again(s, c, first, stride);
    for (int64_t k = first; k < end; k += stride, again.next()) {
      const float d = x[again.offset] - mean;
      m2 += d * d;
    }
    return Moments{static_cast<double>(count), static_cast<double>(mean), static_cast<double>(m2)};
  }
};

// A thread's sum(dy) and sum(dy * (x - mean)) over its values of channel c.
struct BatchNormGradShare {
  const float* x;
  const float* dy;
  ops::BatchNormShape s;
  const float* mean;
  WT_HD Sum2d operator()(int64_t c, int64_t first, int64_t end, int64_t stride) const {
    Sum2f sums;
    const float mu = mean[c];
    ChannelCursor at(s, c, first, stride);
    for (int64_t k = first; k < end; k += stride, at.next()) {
      sums.a += dy[at.offset];
      sums.b += dy[at.offset] * (x[at.offset] - mu);
    }
    return Sum2d(sums);
  }
};

// y = a * x + b over a thread's values of channel c (the host's BatchNormNormalise per element).
WT_HD void batchnorm_normalise_share(const float* x, const ops::BatchNormShape& s, int64_t c,
                                     int64_t first, int64_t end, int64_t stride,
                                     const AffineTerms& t, float* y) {
  ChannelCursor at(s, c, first, stride);
  for (int64_t k = first; k < end; k += stride, at.next()) y[at.offset] = t.a * x[at.offset] + t.b;
}

// dx = a * dy + bx * x + cst over a thread's values of channel c (BatchNormBackward::dx_row).
WT_HD void batchnorm_dx_share(const float* x, const float* dy, const ops::BatchNormShape& s,
                              int64_t c, int64_t first, int64_t end, int64_t stride,
                              const BatchNormBackward::DxTerms& t, float* dx) {
  ChannelCursor at(s, c, first, stride);
  for (int64_t k = first; k < end; k += stride, at.next())
    dx[at.offset] = t.a * dy[at.offset] + t.bx * x[at.offset] + t.cst;
}

}  // namespace wt::kern
