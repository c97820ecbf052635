#pragma once
// Row kernels on a [rows, width] float matrix (row-major): a bias or position table broadcast
// over the rows and its gradient summed back, and embedding-table gathers and scatter-adds.
#include <cstdint>

#include "ops/input_check.hpp"  // token_id_error, for the backends

namespace wt::ops {

// y[r, :] = row for every r
void broadcast_rows(const float* row, int64_t rows, int64_t width, float* y);
// y[r, :] = x[r, :] + row
void add_row(const float* x, const float* row, int64_t rows, int64_t width, float* y);
// sums[j] += sum over r of x[r, j]
void add_column_sums(const float* x, int64_t rows, int64_t width, float* sums);
// dx = dy where y > 0, and sums += dx's column sums, in one pass (kern::ReluMaskColumnSums).
void relu_backward_column_sums(const float* y, const float* dy, int64_t rows, int64_t width,
                               float* dx, float* sums);
// y[r, :] = table[ids[r], :]
void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width, float* y);
// table[ids[r], :] += x[r, :] (a repeated id accumulates)
void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                      float* table);

}  // namespace wt::ops
