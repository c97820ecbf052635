#include "ops/host/rows.hpp"

#include <cstring>

#include "ops/host/host_for.hpp"

namespace wt::ops {

void broadcast_rows(const float* row, int64_t rows, int64_t width, float* y) {
  for (int64_t r = 0; r < rows; ++r) std::memcpy(y + r * width, row, sizeof(float) * size_t(width));
}

void add_row(const float* __restrict x, const float* __restrict row, int64_t rows, int64_t width,
             float* __restrict y) {
  host_for("wt::add_row", rows, [=](int64_t r) {
    for (int64_t j = 0; j < width; ++j) y[r * width + j] = x[r * width + j] + row[j];
  });
}

void add_column_sums(const float* __restrict x, int64_t rows, int64_t width,
                     float* __restrict sums) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) sums[j] += x[r * width + j];
}

void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width, float* y) {
  host_for("wt::gather_rows", rows, [=](int64_t r) {
    std::memcpy(y + r * width, table + ids[r] * width, sizeof(float) * size_t(width));
  });
}

// One thread: a repeated id adds into the same row, which threads would race on.
void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                      float* table) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = table + ids[r] * width;
    for (int64_t j = 0; j < width; ++j) row[j] += x[r * width + j];
  }
}

}  // namespace wt::ops
