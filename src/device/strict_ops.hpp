#pragma once
// The strict device's kernels: each call first declares to the race detector every range of
// device memory the kernel reads and writes (race_detector.hpp), so an access that nothing orders
// after another stream's or a transfer's is refused with both named. Called from host code, the
// kernel is then queued on the stream (it runs later, when the strict queues run); called from
// device work already running on the queues (an instruction the executor queued), it runs inline
// as part of that work. Kernels that hand a value back to the host (the weight codec) synchronise
// the device and run at once, as a GPU host's blocking copy would; the non-finite count stays in
// device memory instead (count_nonfinite_into).
//
// Arguments are captured by value: a pointer is device memory, valid until the kernel runs
// because the allocator is stream ordered; host arrays of pointers are copied.
#include <functional>
#include <initializer_list>

#include "device/strict_streams.hpp"
#include "ops/ops_backend.hpp"

namespace wt {

class StrictOps final : public OpsBackend {
 public:
  // Enqueues `inner`'s kernels on `stream` of `queues`; workspace comes from `memory`.
  StrictOps(const OpsBackend& inner, StrictStreams& queues, CachingAllocator& memory, int stream)
      : inner_(inner), queues_(queues), memory_(memory), stream_(stream) {}
  const char* name() const override { return "strict"; }

  void relu_forward(const float* x, float* y, int64_t n) const override;
  void relu_backward(const float* y, const float* dy, float* dx, int64_t n) const override;
  void gelu_forward(const float* x, float* y, int64_t n) const override;
  void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) const override;
  void sum_arrays(const float* const* xs, int count, float* y, int64_t n) const override;
  void scale(const float* x, float s, float* y, int64_t n) const override;
  void accumulate(const float* x, float* y, int64_t n) const override;
  void scale_in_place(float s, float* y, int64_t n) const override;
  void multiply(const float* a, const float* b, float* y, int64_t n) const override;
  void fill(float value, float* y, int64_t n) const override;
  void copy(const float* x, float* y, int64_t n) const override;
  void scale_by(const float* x, const float* s, float factor, float* y, int64_t n) const override;
  void dequantize_u8(const uint8_t* x, int64_t n, int64_t row, int64_t group, const float* table,
                     float* y) const override;
  void dropout_masks(const ops::DropoutMasks& d, float* mask) const override;
  void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
            int64_t ldc) const override;
  void linear_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                      int64_t out, float* y) const override;
  void linear_backward(const float* x, const float* w, const float* dy, int64_t rows, int64_t in,
                       int64_t out, float* dw, float* db, float* dx) const override;
  void add_row(const float* x, const float* row, int64_t rows, int64_t width,
               float* y) const override;
  void add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) const override;
  void gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width,
                   float* y) const override;
  void token_ids(const float* x, int64_t n, int64_t vocab, int64_t* ids,
                 float* check) const override;
  void scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                        float* table, int64_t table_rows) const override;
  void conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                      const float* bias, float* y, const Scratch& scratch) const override;
  void conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                       const float* dy, float* dx, float* dw, float* dbias,
                       const Scratch& scratch) const override;
  int64_t conv2d_scratch_floats(const ops::Conv2dGeometry& g, bool bias) const override {
    return inner_.conv2d_scratch_floats(g, bias);
  }
  void linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t in,
                           int64_t out, float* y) const override;
  void conv2d_relu_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                           const float* bias, float* y, const Scratch& scratch) const override;
  void relu_backward_column_sums(const float* y, const float* dy, int64_t rows, int64_t width,
                                 float* dx, float* sums) const override;
  void maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                               float* dx) const override;
  void maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const override;
  void maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                          float* dx) const override;
  void avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const override;
  void avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const override;
  void global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels, const float* x,
                              float* y) const override;
  void global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels, const float* dy,
                               float* dx) const override;
  void batchnorm_forward_train(const float* x, const ops::BatchNormShape& s, const float* gamma,
                               const float* beta, float eps, float momentum, float* running_mean,
                               float* running_var, float* mean, float* invstd,
                               float* y) const override;
  void batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s, const float* gamma,
                              const float* beta, const float* running_mean,
                              const float* running_var, float eps, float* mean, float* invstd,
                              float* y) const override;
  void batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                          const float* gamma, const float* mean, const float* invstd,
                          bool batch_stats, float* dx, float* dgamma, float* dbeta) const override;
  void layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows, int64_t dim,
                          double eps, float* y, float* stats) const override;
  void layer_norm_backward(const float* x, const float* dy, const float* w, const float* stats,
                           int64_t rows, int64_t dim, float* dw, float* db,
                           float* dx) const override;
  void causal_softmax(float* p, int64_t T, int64_t count) const override;
  void causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count) const override;
  void softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n, int64_t k,
                            float* grad, const ops::XentOutputs& out) const override;
  void count_nonfinite_into(const float* x, int64_t n, float* count) const override;
  int64_t encode_weights(const WeightCodec& codec, const float* x, int64_t n, uint32_t* words,
                         float* side) const override;
  int64_t decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                         const float* side, float* y) const override;
  void sgd_update(const ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                  const float* skip) const override;
  void adamw_update(const ops::AdamWUpdate& u, int64_t n, float* w, const float* g, float* m,
                    float* v, const float* skip) const override;

 private:
  // softmax_xent_forward's kernel, reading the labels as a GPU would (pinned or staged).
  std::function<void()> labels_read(const float* logits, const int32_t* labels, int64_t n,
                                    int64_t k, float* grad, const ops::XentOutputs& out) const;
  // One range a kernel touches: `count` elements of `size` bytes from `ptr` (nullptr: none).
  struct Use {
    const void* ptr;
    int64_t count;
    bool write;
    size_t size = sizeof(float);
  };
  // Declares one range `kernel` touches to the race detector (at the kernel's place in the
  // stream: the running work's, or the next queued).
  void declare(const char* kernel, const Use& use) const;
  // conv2d_forward or, with `relu`, conv2d_relu_forward: the same uses and workspace.
  void conv_forward(const char* kernel, const ops::Conv2dGeometry& g, const float* x,
                    const float* w, const float* bias, float* y, const Scratch& scratch,
                    bool relu) const;
  // A convolution's workspace of `need` floats: the caller's reservation, else one taken now into
  // `taken` (nullptr in a replayed graph step, whose op host code a GPU never runs).
  float* conv_workspace(const Scratch& scratch, int64_t need, Tensor& taken) const;
  // Declares `uses` to the race detector under `kernel`'s name, then queues `work`.
  void enqueue(const char* kernel, std::initializer_list<Use> uses,
               std::function<void()> work) const;
  // Runs `work` now on a synchronised device (a kernel whose result the host reads). Device work
  // (a running instruction, a transfer's completion) is already where the device has got to.
  template <typename Work>
  auto blocking(Work work) const {
    if (!in_device_work()) queues_.synchronize();
    DeviceWorkScope device_work;
    return work();
  }
  // Bytes from `ptr` to the end of its allocation (a table indexed by device data).
  int64_t floats_to_end(const float* ptr) const;

  const OpsBackend& inner_;
  StrictStreams& queues_;
  CachingAllocator& memory_;
  int stream_;
};

}  // namespace wt
