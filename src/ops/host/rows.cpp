#include "ops/host/rows.hpp"

#include <cstring>
#include <string>

#include "ops/host/host_for.hpp"
#include "ops/portable/rows.hpp"

namespace wt::ops {

void broadcast_rows(const float* row, int64_t rows, int64_t width, float* y) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * width, row, sizeof(float) * size_t(width));
}

void add_row(const float* x, const float* row, int64_t rows, int64_t width, float* y) {
  host_for_rows_cols("wt::add_row", rows, width, kern::AddRow{x, row, width, y});
}

void add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) {
  host_for_columns("wt::add_column_sums", rows, width, kern::AddColumnSums{x, width, sums});
}

void relu_backward_column_sums(const float* y, const float* dy, int64_t rows, int64_t width,
                               float* dx, float* sums) {
  host_for_columns("wt::relu_backward_column_sums", rows, width,
                   kern::ReluMaskColumnSums{y, dy, width, dx, sums});
}

void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width, float* y) {
  host_for_rows_cols("wt::gather_rows", rows, width, kern::GatherRows{table, ids, width, y});
}

void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                      float* table) {
  host_for_columns("wt::scatter_add_rows", rows, width, kern::ScatterAddRows{x, ids, width, table});
}

}  // namespace wt::ops
