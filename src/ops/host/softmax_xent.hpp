#pragma once
// Softmax cross-entropy over a batch of logit rows, numerically stable (the row maximum is
// subtracted before exponentiating).
#include <cstdint>

#include "ops/kernel_args.hpp"

namespace wt::ops {

// logits [n, k], labels [n]. Writes grad[n, k] = softmax(x) - onehot(label): the gradient of the
// unscaled loss sum, so backward only scales it. Throws std::out_of_range for a label outside
// [0, k) rather than reading out of bounds.
// Throws std::out_of_range naming the first label outside [0, k).
void check_labels(const int32_t* labels, int64_t n, int64_t k);
XentStats softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                               float* grad);

}  // namespace wt::ops
