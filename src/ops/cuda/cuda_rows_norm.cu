// Row, embedding, layer-norm, attention and global-pooling kernels of CudaOps: the portable
// functors (ops/portable/) on the GPU.
#include <stdexcept>

#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/host/rows.hpp"
#include "ops/portable/attention.hpp"
#include "ops/portable/layer_norm.hpp"
#include "ops/portable/rows.hpp"

namespace wt::cuda {

void CudaOps::add_row(const float* x, const float* row, int64_t rows, int64_t width,
                      float* y) const {
  cuda_for_rows_cols(impl_->stream, rows, width, kern::AddRow{x, row, width, y});
}

// Many blocks over chunks of rows (cuda_reduce.cuh), not one thread per column over every row.
void CudaOps::add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) const {
  cuda_reduce_columns<double, float>(impl_->stream, rows, width, kern::MatrixEntry{x, width},
                                     kern::AddColumnTotal{sums}, impl_->partials,
                                     "add_column_sums");
}

void CudaOps::gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width,
                          float* y) const {
  cuda_for_rows_cols(impl_->stream, rows, width, kern::GatherRows{table, ids, width, y});
}

namespace {

// A warp per table row v and tile of kScatterTile columns: the warp reads 32 ids at a time, a
// ballot marks the rows whose id is v, and every lane adds those rows' values to its columns in
// increasing row order: the host's order, so the same bits. Where one thread per entry read all
// the ids in sequence (119 us against PyTorch's 41.5 for transformer_small's embedding on an
// H200), the ids are read once per warp, 32 at a time, and only v's rows are added.
constexpr int kScatterPerLane = 4;
constexpr int64_t kScatterTile = int64_t(kern::kRowLanes) * kScatterPerLane;

struct ScatterAddRowsLanes {
  const float* x;
  const int64_t* ids;
  int64_t rows, width;
  float* table;
  int64_t tiles;
  __device__ void operator()(int64_t warp, int lane) const {
    const int64_t v = warp / tiles, first = (warp % tiles) * kScatterTile + lane;
    float* entry = table + v * width;
    float total[kScatterPerLane];
    for (int q = 0; q < kScatterPerLane; ++q) {
      const int64_t j = first + q * kern::kRowLanes;
      total[q] = j < width ? entry[j] : 0.0f;
    }
    for (int64_t base = 0; base < rows; base += kern::kRowLanes) {
      const bool mine = base + lane < rows && ids[base + lane] == v;
      for (unsigned found = __ballot_sync(0xffffffffu, mine); found != 0; found &= found - 1) {
        const float* xr = x + (base + __ffs(int(found)) - 1) * width;
        for (int q = 0; q < kScatterPerLane; ++q) {
          const int64_t j = first + q * kern::kRowLanes;
          if (j < width) total[q] += xr[j];
        }
      }
    }
    for (int q = 0; q < kScatterPerLane; ++q) {
      const int64_t j = first + q * kern::kRowLanes;
      if (j < width) entry[j] = total[q];
    }
  }
};

}  // namespace

void CudaOps::scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                               float* table, int64_t table_rows) const {
  if (width <= 0) return;
  const int64_t tiles = kern::ceil_div(width, kScatterTile);
  cuda_for_row_lanes(impl_->stream, table_rows * tiles,
                     ScatterAddRowsLanes{x, ids, rows, width, table, tiles});
}

namespace {

struct TokenIdCheck {
  kern::TokenIds ids;
  WT_HD kern::FirstBad operator()(int64_t r) const {
    kern::FirstBad bad;
    if (!ids(r)) bad.at = r;
    return bad;
  }
};

struct StoreFirstBad {
  int64_t* out;
  __device__ void operator()(const kern::FirstBad& bad) const { *out = bad.at; }
};

}  // namespace

// With a check slot the first bad id is recorded there, read back with the step's results; without
// one the answer comes back before the call returns (a synchronisation: tools and tests).
void CudaOps::token_ids(const float* x, int64_t n, int64_t vocab, int64_t* ids,
                        float* check) const {
  if (n <= 0) return;
  if (check) {
    cuda_reduce<kern::FirstBad>(
        impl_->stream, n, 4, TokenIdCheck{kern::TokenIds{x, vocab, ids}},
        kern::RecordFirstBad{reinterpret_cast<kern::InputCheck*>(check), x, vocab}, impl_->partials,
        "token_ids");
    return;
  }
  impl_->refuse_in_capture("token_ids with a synchronous check (no device-side record)");
  auto* first_bad = static_cast<int64_t*>(impl_->flag.at_least(sizeof(int64_t)));
  cuda_reduce<kern::FirstBad>(impl_->stream, n, 4, TokenIdCheck{kern::TokenIds{x, vocab, ids}},
                              StoreFirstBad{first_bad}, impl_->partials, "token_ids");
  int64_t at = 0;
  WT_CUDA_CHECK(cudaMemcpyAsync(&at, first_bad, sizeof at, cudaMemcpyDeviceToHost, impl_->stream));
  WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  if (at < n) {
    float value = 0;
    WT_CUDA_CHECK(cudaMemcpy(&value, x + at, sizeof value, cudaMemcpyDeviceToHost));
    throw std::out_of_range(ops::token_id_error(value, at, vocab));
  }
}

namespace {

// Layer norm's row kernels a warp a row (ops/portable/layer_norm.hpp's row form): coalesced reads,
// and 32 times the threads of one thread a row.
struct LayerNormForwardLanes {
  kern::LayerNormForward f;
  __device__ void operator()(int64_t r, int lane) const {
    const float mean = f.mean_of(lane_tree(f.sum<kern::kRowLanes>(r, lane)));
    const float rstd = f.rstd_of(lane_tree(f.centred_squares<kern::kRowLanes>(r, lane, mean)));
    f.write<kern::kRowLanes>(r, lane, mean, rstd);
  }
};

struct LayerNormInputGradLanes {
  kern::LayerNormInputGrad f;
  __device__ void operator()(int64_t r, int lane) const {
    f.write<kern::kRowLanes>(r, lane, lane_tree(f.sums<kern::kRowLanes>(r, lane)));
  }
};

// The row's maximum over the warp's lanes, in the same fixed tree as lane_tree, on every lane.
__device__ float lane_max(float v) {
  for (int width = kern::kRowLanes / 2; width > 0; width /= 2)
    v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, width));
  return __shfl_sync(0xffffffffu, v, 0);
}

// Causal softmax a warp a row (the portable CausalSoftmax's formulas; row r is row r % T of its
// T x T matrix): lane l takes columns l, l + 32, ..., coalesced, where one thread a row read its
// row alone (36.7 us against PyTorch's 6.0 for transformer_small's 8,192 rows of 64 on an H200).
// The sum joins in double in lane_tree's fixed tree: the same bits run to run.
struct CausalSoftmaxLanes {
  float* p;
  int64_t T;
  __device__ void operator()(int64_t r, int lane) const {
    const int64_t i = r % T;
    float* row = p + r * T;
    float mx = -INFINITY;
    for (int64_t j = lane; j <= i; j += kern::kRowLanes) mx = fmaxf(mx, row[j]);
    mx = lane_max(mx);
    double sum = 0.0;
    for (int64_t j = lane; j <= i; j += kern::kRowLanes) sum += double(expf(row[j] - mx));
    const float inv = 1.0f / float(lane_tree(sum));
    for (int64_t j = lane; j < T; j += kern::kRowLanes)
      row[j] = j <= i ? expf(row[j] - mx) * inv : 0.0f;
  }
};

// Its backward, g = p * (g - sum_j p_j g_j), a warp a row likewise.
struct CausalSoftmaxBackwardLanes {
  const float* p;
  float* g;
  int64_t T;
  __device__ void operator()(int64_t r, int lane) const {
    const int64_t i = r % T;
    const float* pr = p + r * T;
    float* gr = g + r * T;
    double dot = 0.0;
    for (int64_t j = lane; j <= i; j += kern::kRowLanes) dot += double(pr[j] * gr[j]);
    const float d = float(lane_tree(dot));
    for (int64_t j = lane; j < T; j += kern::kRowLanes) gr[j] = j <= i ? pr[j] * (gr[j] - d) : 0.0f;
  }
};

}  // namespace

void CudaOps::layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows,
                                 int64_t dim, double eps, float* y, float* stats) const {
  cuda_for_row_lanes(impl_->stream, rows,
                     LayerNormForwardLanes{kern::LayerNormForward{x, w, b, dim, eps, y, stats}});
}

void CudaOps::layer_norm_backward(const float* x, const float* dy, const float* w,
                                  const float* stats, int64_t rows, int64_t dim, float* dw,
                                  float* db, float* dx) const {
  cuda_reduce_columns<kern::Sum2d, kern::Sum2f>(
      impl_->stream, rows, dim, kern::LayerNormParamTerms{x, dy, stats, dim},
      kern::AddLayerNormParamTotals{dw, db}, impl_->partials, "layer_norm_backward");
  if (dx)
    cuda_for_row_lanes(impl_->stream, rows,
                       LayerNormInputGradLanes{kern::LayerNormInputGrad{x, dy, w, stats, dim, dx}});
}

void CudaOps::causal_softmax(float* p, int64_t T, int64_t count) const {
  cuda_for_row_lanes(impl_->stream, T * count, CausalSoftmaxLanes{p, T});
}

void CudaOps::causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count) const {
  cuda_for_row_lanes(impl_->stream, T * count, CausalSoftmaxBackwardLanes{p, g, T});
}

void CudaOps::global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels,
                                     const float* x, float* y) const {
  const float inv = 1.0f / static_cast<float>(pixels);
  cuda_for(impl_->stream, batch * channels, kern::GlobalAvgPoolForward{x, pixels, inv, y});
}

void CudaOps::global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels,
                                      const float* dy, float* dx) const {
  const float inv = 1.0f / static_cast<float>(pixels);
  cuda_for_rows_cols(impl_->stream, batch * channels, pixels,
                     kern::GlobalAvgPoolBackward{dy, pixels, inv, dx});
}

}  // namespace wt::cuda
