#pragma once
// Layer normalisation over the last dimension of a [rows, dim] matrix, with a per-feature scale w
// and shift b: y = (x - mean) / sqrt(var + eps) * w + b. stats keeps (mean, 1/std) per row for the
// backward pass.
#include <cstdint>

namespace wt::ops {

void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t dim,
                        double eps, float* y, float* stats);
// dw, db accumulate; dx (may be null) is written.
void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                         int64_t rows, int64_t dim, float* dw, float* db, float* dx);

}  // namespace wt::ops
