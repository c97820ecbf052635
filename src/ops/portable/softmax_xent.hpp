#pragma once
// Softmax cross-entropy of [n, k] logits, one index per row (portable.hpp): the row's gradient
// softmax - onehot, and its loss and hit, which the launcher sums (the host: a Kokkos reduction
// in row order; the GPU: one block's fixed-order tree, deterministic run to run).
#include "ops/portable/portable.hpp"

namespace wt::kern {

struct XentRow {
  double loss = 0;  // -log softmax(x)[label]
  int64_t hit = 0;  // the first argmax is the label
  WT_HD XentRow& operator+=(const XentRow& other) {
    loss += other.loss;
    hit += other.hit;
    return *this;
  }
};

// Labels must be in [0, k): the launcher checks them first (a kernel cannot throw).
struct SoftmaxXentRow {
  const float* logits;
  const int32_t* labels;
  int64_t k;
  float* grad;
  WT_HD XentRow operator()(int64_t r) const {
    const int32_t label = labels[r];
    const float* x = logits + r * k;
    float* g = grad + r * k;
    int64_t argmax = 0;
    for (int64_t j = 1; j < k; ++j)
      if (x[j] > x[argmax]) argmax = j;
    const float mx = x[argmax];
    float denom = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      g[j] = expf(x[j] - mx);
      denom += g[j];
    }
    const float inv = 1.0f / denom;
    for (int64_t j = 0; j < k; ++j) g[j] *= inv;
    g[label] -= 1.0f;
    // -log softmax = log(sum exp(x - max)) - (x_label - max)
    return XentRow{log(static_cast<double>(denom)) - static_cast<double>(x[label] - mx),
                   argmax == label ? 1 : 0};
  }
};

// The loss layer's output and the step's totals from the summed rows (ops::XentOutputs).
WT_HD void store_xent(double loss_sum, int64_t correct, double per_row, float loss_scale,
                      float* loss, double* totals) {
  if (loss) loss[0] = static_cast<float>(loss_scale * loss_sum * per_row);
  if (totals) {
    totals[0] += loss_sum * per_row;
    totals[1] += double(correct) * per_row;
  }
}

}  // namespace wt::kern
