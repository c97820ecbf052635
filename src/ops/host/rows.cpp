#include "ops/host/rows.hpp"

#include <algorithm>
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
// Rows may repeat an id (a token that occurs twice), so threads split the columns, not the
// rows: each of host_threads() stripes (whole cache lines) of every table row is one kernel
// index, which adds the rows into its stripe in row order: the plain loop's order and sums. On
// the Serial backend the one stripe is the whole row, the plain loop itself (narrow stripes
// measured 2.5x slower there: bench/README.md).
void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                      float* table) {
  constexpr int64_t kLine = 16;  // floats per cache line
  const int64_t lines = (width + kLine - 1) / kLine;
  const int64_t stripes = std::max<int64_t>(1, std::min<int64_t>(host_threads(), lines));
  host_for("wt::scatter_add_rows", stripes, [=](int64_t stripe) {
    const int64_t begin = std::min(width, stripe * lines / stripes * kLine);
    const int64_t end = std::min(width, (stripe + 1) * lines / stripes * kLine);
    for (int64_t r = 0; r < rows; ++r) {
      float* __restrict row = table + ids[r] * width;
      const float* __restrict xr = x + r * width;
      for (int64_t j = begin; j < end; ++j) row[j] += xr[j];
    }
  });
}

}  // namespace wt::ops
