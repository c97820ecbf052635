#pragma once
// Softmax cross-entropy of [n, k] logits, one index per row (portable.hpp): the row's gradient
// softmax - onehot, and its loss and hit, which the launcher sums (the host: a Kokkos reduction
// in row order; the GPU: a warp a row, then many blocks' fixed trees, deterministic run to run).
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

// A row's first maximum so far: the value and its column (at < 0: no column yet).
struct RowMax {
  float value = 0.0f;
  int64_t at = -1;
};

// The better of two maxima of one row: the larger value, on a tie the earlier column. A NaN can
// only be x[0]'s (offer_column skips the others), and it wins, as in the host's scan (`x[j] >
// x[argmax]` never replaces a NaN at column 0, and never takes a later one). An order on the
// columns: the same answer in any joining order, so a warp's lanes may join in a tree.
WT_HD RowMax join_max(const RowMax& a, const RowMax& b) {
  if (b.at < 0) return a;
  if (a.at < 0) return b;
  if (a.value != a.value) return a;
  if (b.value != b.value) return b;
  return b.value > a.value || (b.value == a.value && b.at < a.at) ? b : a;
}

WT_HD RowMax offer_column(const RowMax& best, float value, int64_t j) {
  if (value != value && j != 0) return best;
  return join_max(best, RowMax{value, j});
}

// Labels must be in [0, k): the launcher checks them first (a kernel cannot throw). The host runs
// one index per row; the GPU a warp per row (ops/cuda/cuda_loss_optim.cu) with the same maximum,
// the same column-order sum of the exponentials and the same per-element arithmetic.
struct SoftmaxXentRow {
  const float* logits;
  const int32_t* labels;
  int64_t k;
  float* grad;
  WT_HD XentRow operator()(int64_t r) const {
    const int32_t label = labels[r];
    const float* x = logits + r * k;
    float* g = grad + r * k;
    const RowMax m = row_max<1>(r, 0);
    float denom = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      g[j] = expf(x[j] - m.value);
      denom += g[j];
    }
    const float inv = 1.0f / denom;
    for (int64_t j = 0; j < k; ++j) g[j] *= inv;
    g[label] -= 1.0f;
    return result(r, denom, m);
  }
  // The maximum over columns first, first + Step, ...
  template <int Step>
  WT_HD RowMax row_max(int64_t r, int first) const {
    const float* x = logits + r * k;
    RowMax best;
    for (int64_t j = first; j < k; j += Step) best = offer_column(best, x[j], j);
    return best;
  }
  // -log softmax = log(sum exp(x - max)) - (x_label - max); a hit when the first argmax is the
  // label.
  WT_HD XentRow result(int64_t r, float denom, const RowMax& m) const {
    const int32_t label = labels[r];
    return XentRow{
        log(static_cast<double>(denom)) - static_cast<double>(logits[r * k + label] - m.value),
        m.at == label ? 1 : 0};
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
