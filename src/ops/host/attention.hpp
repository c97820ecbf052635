#pragma once
// Causal self-attention's softmax over a [T, T] score matrix (row i attends to columns 0..i): the
// masked upper triangle is written as zeros, so the probabilities feed a full-square GEMM.
#include <cstdint>

namespace wt::ops {

// p[i, j] = softmax over j <= i of p[i, :], in place; p[i, j > i] = 0.
void causal_softmax(float* p, int64_t T, int64_t count = 1);
// Softmax backward in place on g (dprobs in, dscores out): g = p * (g - sum_j p g), row by row;
// masked entries (p = 0) become 0.
void causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count = 1);

}  // namespace wt::ops
