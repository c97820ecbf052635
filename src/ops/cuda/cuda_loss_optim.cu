// The loss, the non-finite guard, the optimizer updates and the weight codecs of CudaOps.
#include <type_traits>
#include <vector>

#include "compress/weight_codec.hpp"
#include "ops/cuda/cuda_launch.cuh"
#include "ops/cuda/cuda_ops_impl.cuh"
#include "ops/host/softmax_xent.hpp"
#include "ops/portable/elementwise.hpp"
#include "ops/portable/optimizer_updates.hpp"
#include "ops/portable/softmax_xent.hpp"

namespace wt::cuda {
namespace {

struct StoreXent {
  double per_row;
  float loss_scale;
  float* loss;
  double* totals;
  __device__ void operator()(const kern::XentRow& sum) const {
    kern::store_xent(sum.loss, sum.hit, per_row, loss_scale, loss, totals);
  }
};

// Softmax cross-entropy a warp a row (the portable SoftmaxXentRow's arithmetic): lane l takes
// columns l, l + 32, ..., coalesced, where one thread a row left most of the GPU idle (58.5 us
// against PyTorch's 21.5 for transformer_small's 2048 x 73 on an H200). The maximum joins over the
// lanes in any order (join_max is an order on the columns); the exponentials are added column by
// column, the host's order, through shuffles; the row's loss and hit go to rows_out[r], which the
// flat fixed-tree reduction sums as it summed the rows before.
__device__ kern::RowMax shuffle_down(const kern::RowMax& m, int width) {
  return kern::RowMax{__shfl_down_sync(0xffffffffu, m.value, width),
                      __shfl_down_sync(0xffffffffu, m.at, width)};
}

struct SoftmaxXentLanes {
  kern::SoftmaxXentRow f;
  kern::XentRow* rows_out;
  __device__ void operator()(int64_t r, int lane) const {
    kern::RowMax m = f.row_max<kern::kRowLanes>(r, lane);
    for (int width = kern::kRowLanes / 2; width > 0; width /= 2)
      m = kern::join_max(m, shuffle_down(m, width));
    m = kern::RowMax{__shfl_sync(0xffffffffu, m.value, 0), __shfl_sync(0xffffffffu, m.at, 0)};
    const float* x = f.logits + r * f.k;
    float* g = f.grad + r * f.k;
    float denom = 0.0f;
    for (int64_t base = 0; base < f.k; base += kern::kRowLanes) {
      const float e = base + lane < f.k ? expf(x[base + lane] - m.value) : 0.0f;
      if (base + lane < f.k) g[base + lane] = e;  // read back below by this lane alone
      const int columns = int(kern::min_i64(kern::kRowLanes, f.k - base));
      for (int t = 0; t < columns; ++t) denom += __shfl_sync(0xffffffffu, e, t);
    }
    const float inv = 1.0f / denom;
    const int32_t label = f.labels[r];
    for (int64_t j = lane; j < f.k; j += kern::kRowLanes) {
      // Rounded before the label's subtraction, as the host's two passes: never one fma.
      const float p = __fmul_rn(g[j], inv);
      g[j] = j == label ? p - 1.0f : p;
    }
    if (lane == 0) rows_out[r] = f.result(r, denom, m);
  }
};

struct XentRowAt {
  const kern::XentRow* rows;
  __device__ kern::XentRow operator()(int64_t r) const { return rows[r]; }
};

struct StoreCount {
  float* count;
  __device__ void operator()(int64_t n) const { ops::store_count(count, double(n)); }
};

// A step that changes nothing when the device-side skip count is nonzero (a non-finite gradient):
// every thread reads the flag, so the host never waits for it.
template <class Step>
struct SkipUnless {
  Step step;
  const float* skip;
  __device__ void operator()(int64_t i) const {
    if (skip && ops::load_count(skip) != 0) return;
    step(i);
  }
  __device__ void four(int64_t q) const {
    if (skip && ops::load_count(skip) != 0) return;
    step.four(q);
  }
  bool aligned() const { return step.aligned(); }
};

}  // namespace

// The labels are host memory (the batch's, as on the strict device): checked here, then staged
// into a device buffer on this stream, as cudaMemcpyAsync stages pageable memory.
void CudaOps::softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                                   float* grad, const ops::XentOutputs& out) const {
  ops::check_labels(labels, n, k);
  // A captured copy node reads `labels` again at every replay: pageable memory would be gone.
  if (impl_->capturing()) {
    cudaPointerAttributes where{};
    WT_CUDA_CHECK(cudaPointerGetAttributes(&where, labels));
    if (where.type != cudaMemoryTypeHost)
      throw std::logic_error(
          "cuda: softmax_xent_forward's labels in pageable host memory while a step is captured "
          "as a graph; pass them in a fixed pinned buffer");
  }
  auto* staged =
      static_cast<int32_t*>(impl_->labels.at_least(sizeof(int32_t) * size_t(n > 0 ? n : 1)));
  WT_CUDA_CHECK(cudaMemcpyAsync(staged, labels, sizeof(int32_t) * size_t(n), cudaMemcpyHostToDevice,
                                impl_->stream));
  auto* rows = static_cast<kern::XentRow*>(
      impl_->xent_rows.at_least(sizeof(kern::XentRow) * size_t(n > 0 ? n : 1)));
  cuda_for_row_lanes(impl_->stream, n,
                     SoftmaxXentLanes{kern::SoftmaxXentRow{logits, staged, k, grad}, rows});
  // Many blocks: the rows' losses join in the fixed tree.
  cuda_reduce<kern::XentRow>(impl_->stream, n, 1, XentRowAt{rows},
                             StoreXent{out.per_row, out.loss_scale, out.loss, out.totals},
                             impl_->partials, "softmax_xent_forward");
}

void CudaOps::count_nonfinite_into(const float* x, int64_t n, float* count) const {
  cuda_reduce<int64_t>(impl_->stream, n, 16, kern::NonFinite{x}, StoreCount{count}, impl_->partials,
                       "count_nonfinite_into");
}

void CudaOps::sgd_update(const ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                         const float* skip) const {
  kern::with_sgd_step(u, w, g, b, [&](const auto& step) {
    using Step = std::decay_t<decltype(step)>;
    cuda_for4(impl_->stream, n, SkipUnless<Step>{step, skip});
  });
}

void CudaOps::adamw_update(const ops::AdamWUpdate& u, int64_t n, float* w, const float* g, float* m,
                           float* v, const float* skip) const {
  cuda_for4(impl_->stream, n, SkipUnless<kern::AdamWStep>{kern::AdamWStep{u, w, g, m, v}, skip});
}

// The codecs run on the host over staged copies (a synchronisation per broadcast): raw mode's
// side list is a running index, a scan that the portable kernels do not have yet.
int64_t CudaOps::encode_weights(const WeightCodec& codec, const float* x, int64_t n,
                                uint32_t* words, float* side) const {
  std::vector<float> values(static_cast<size_t>(n)), side_host(static_cast<size_t>(n) + 2);
  std::vector<uint32_t> words_host(static_cast<size_t>(encoded_words(codec, n)));
  WT_CUDA_CHECK(cudaMemcpyAsync(values.data(), x, sizeof(float) * size_t(n), cudaMemcpyDeviceToHost,
                                impl_->stream));
  WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  const int64_t used =
      wt::encode_weights(codec, values.data(), n, words_host.data(), side_host.data());
  WT_CUDA_CHECK(cudaMemcpyAsync(words, words_host.data(), sizeof(uint32_t) * words_host.size(),
                                cudaMemcpyHostToDevice, impl_->stream));
  if (side && used > 0)
    WT_CUDA_CHECK(cudaMemcpyAsync(side, side_host.data(), sizeof(float) * size_t(used),
                                  cudaMemcpyHostToDevice, impl_->stream));
  WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));  // the host vectors end here
  return used;
}

int64_t CudaOps::decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                                const float* side, float* y) const {
  std::vector<uint32_t> words_host(static_cast<size_t>(encoded_words(codec, n)));
  std::vector<float> values(static_cast<size_t>(n));
  WT_CUDA_CHECK(cudaMemcpyAsync(words_host.data(), words, sizeof(uint32_t) * words_host.size(),
                                cudaMemcpyDeviceToHost, impl_->stream));
  WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  // The side list holds exactly the floats the words refer to: read no further.
  std::vector<float> side_host(size_t(side ? side_floats(codec, words_host.data(), n) : 0));
  if (!side_host.empty()) {
    WT_CUDA_CHECK(cudaMemcpyAsync(side_host.data(), side, sizeof(float) * side_host.size(),
                                  cudaMemcpyDeviceToHost, impl_->stream));
    WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  }
  const int64_t used = wt::decode_weights(codec, words_host.data(), n,
                                          side ? side_host.data() : nullptr, values.data());
  WT_CUDA_CHECK(cudaMemcpyAsync(y, values.data(), sizeof(float) * size_t(n), cudaMemcpyHostToDevice,
                                impl_->stream));
  WT_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
  return used;
}

}  // namespace wt::cuda
