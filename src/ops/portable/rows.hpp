#pragma once
// Kernels on a [rows, width] row-major matrix (portable.hpp). Two launch shapes:
//   element kernels, body(r, j) for every (r, j) in any order (for_rows_cols);
//   column kernels, body(r, j) for every j with r in increasing order (for_columns): a column
//   accumulates its rows in row order on every device, so sums are deterministic and the same
//   on the host and the GPU, and a repeated embedding id never races.
#include "ops/portable/portable.hpp"

namespace wt::kern {

// y[r, :] = row (the host copies rows with memcpy instead)
struct BroadcastRow {
  const float* row;
  int64_t width;
  float* y;
  WT_HD void operator()(int64_t r, int64_t j) const { y[r * width + j] = row[j]; }
};

// y[r, :] = x[r, :] + row
struct AddRow {
  const float* x;
  const float* row;
  int64_t width;
  float* y;
  WT_HD void operator()(int64_t r, int64_t j) const {
    y[r * width + j] = x[r * width + j] + row[j];
  }
};

// Fused epilogues on the GPU (ops/cuda/cuda_ops.cu): the bias added to a product already in y,
// then the ReLU, in one pass: y + bias, then the max, the arithmetic of a separate bias add and
// ReLU. A linear layer's bias is per column ([rows, width]); a convolution's per channel of an NCHW
// tensor, whose rows are the (sample, channel) planes and columns the pixels.
struct AddRowRelu {
  const float* row;
  int64_t width;
  float* y;
  WT_HD void operator()(int64_t r, int64_t j) const {
    const float v = y[r * width + j] + row[j];
    y[r * width + j] = v > 0.0f ? v : 0.0f;
  }
};

struct AddChannelBiasRelu {
  const float* bias;
  int64_t channels, pixels;
  float* y;
  WT_HD void operator()(int64_t plane, int64_t p) const {
    const float v = y[plane * pixels + p] + bias[plane % channels];
    y[plane * pixels + p] = v > 0.0f ? v : 0.0f;
  }
};

// Column kernel: sums[j] += x[r, j]
struct AddColumnSums {
  const float* x;
  int64_t width;
  float* sums;
  WT_HD void operator()(int64_t r, int64_t j) const { sums[j] += x[r * width + j]; }
};

// relu_backward and AddColumnSums in one pass (OpsBackend::relu_backward_column_sums): each
// masked value is the one relu_backward writes, summed in AddColumnSums' order.
struct ReluMaskColumnSums {
  const float* y;
  const float* dy;
  int64_t width;
  float* dx;
  float* sums;
  WT_HD void operator()(int64_t r, int64_t j) const {
    const int64_t i = r * width + j;
    const float g = dy[i];
    const float masked = y[i] > 0.0f ? g : 0.0f;
    dx[i] = masked;
    sums[j] += masked;
  }
};

// The GPU's column sums (tree_reduce.hpp's column plan): x[r, j] as a value to sum, and each
// column's total added to sums[j].
struct MatrixEntry {
  const float* x;
  int64_t width;
  WT_HD float operator()(int64_t r, int64_t j) const { return x[r * width + j]; }
};
struct AddColumnTotal {
  float* sums;
  WT_HD void operator()(int64_t j, double total) const { sums[j] += static_cast<float>(total); }
};

// y[r, :] = table[ids[r], :]
struct GatherRows {
  const float* table;
  const int64_t* ids;
  int64_t width;
  float* y;
  WT_HD void operator()(int64_t r, int64_t j) const {
    y[r * width + j] = table[ids[r] * width + j];
  }
};

// Column kernel: table[ids[r], j] += x[r, j] (a repeated id accumulates in row order).
struct ScatterAddRows {
  const float* x;
  const int64_t* ids;
  int64_t width;
  float* table;
  WT_HD void operator()(int64_t r, int64_t j) const {
    table[ids[r] * width + j] += x[r * width + j];
  }
};

// Token ids held as floats -> int64 ids. A value that is not an integer in [0, vocab) becomes
// id 0 (so no kernel reads outside the table) and the call returns false; the launcher reports
// the first such position (FirstBad: a minimum that reduces like a sum).
struct TokenIds {
  const float* x;
  int64_t vocab;
  int64_t* ids;
  WT_HD bool operator()(int64_t r) const {
    const float v = x[r];
    const bool ok = v >= 0.0f && v < float(vocab) && float(int64_t(v)) == v;
    ids[r] = ok ? int64_t(v) : 0;
    return ok;
  }
};

struct FirstBad {
  int64_t at = 0x7fffffffffffffffll;  // none
  WT_HD FirstBad& operator+=(const FirstBad& other) {
    if (other.at < at) at = other.at;
    return *this;
  }
};

// A stream's first bad input found by an op on the device (a token id outside the vocabulary),
// kept in device memory and read back with the step's results instead of a synchronisation per
// op: its position + 1 (0: none found), the value and the bound it broke.
struct InputCheck {
  int64_t position_plus_one;
  float value;
  int32_t bound;
};
constexpr int64_t kInputCheckFloats = int64_t(sizeof(InputCheck) / sizeof(float));

// Writes a reduced FirstBad of token ids x into a check, unless it holds an earlier op's.
struct RecordFirstBad {
  InputCheck* check;
  const float* x;
  int64_t vocab;
  WT_HD void operator()(const FirstBad& bad) const {
    if (bad.at == FirstBad{}.at || check->position_plus_one != 0) return;
    check->position_plus_one = bad.at + 1;
    check->value = x[bad.at];
    check->bound = static_cast<int32_t>(vocab);
  }
};

// global average pooling: y[p] = mean of x[p, 0 .. pixels) (one index per (sample, channel))
struct GlobalAvgPoolForward {
  const float* x;
  int64_t pixels;
  float inv;  // 1 / pixels
  float* y;
  WT_HD void operator()(int64_t p) const {
    const float* xp = x + p * pixels;
    float sum = 0.0f;
    for (int64_t i = 0; i < pixels; ++i) sum += xp[i];
    y[p] = sum * inv;
  }
};

// dx[p, i] = dy[p] / pixels (an element kernel over [batch * channels, pixels])
struct GlobalAvgPoolBackward {
  const float* dy;
  int64_t pixels;
  float inv;
  float* dx;
  WT_HD void operator()(int64_t p, int64_t i) const { dx[p * pixels + i] = dy[p] * inv; }
};

}  // namespace wt::kern
