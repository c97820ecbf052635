#include "device/strict_ops.hpp"

#include <vector>

#include "ops/portable/rows.hpp"

namespace wt {

namespace {
int64_t gemm_extent(bool trans, int64_t rows, int64_t cols, int64_t ld) {
  // op(A) is rows x cols; A itself is stored row-major with leading dimension ld.
  if (rows == 0 || cols == 0) return 0;
  return trans ? (cols - 1) * ld + rows : (rows - 1) * ld + cols;
}
int64_t image(const ops::Pool2dGeometry& g) { return g.batch * g.channels * g.in_h * g.in_w; }
int64_t pooled(const ops::Pool2dGeometry& g) {
  return g.batch * g.channels * g.out_h() * g.out_w();
}
}  // namespace

void StrictOps::enqueue(const char* kernel, std::initializer_list<Use> uses,
                        std::function<void()> work) const {
  // Called from running device work (an instruction the executor queued), the kernel runs inline
  // as part of it; from host code it is queued.
  for (const Use& u : uses) declare(kernel, u);
  if (queues_.running()) return work();
  queues_.graph().note_kernel(kernel);
  queues_.launch(stream_, DeviceWork{std::move(work), nullptr, false});
}

void StrictOps::declare(const char* kernel, const Use& use) const {
  if (!use.ptr || use.count <= 0) return;
  const uint64_t sequence = queues_.running() && queues_.running_stream() == stream_
                                ? queues_.running_sequence()
                                : queues_.next_sequence(stream_);
  queues_.races().access(stream_, sequence, use.ptr, size_t(use.count) * use.size, use.write,
                         kernel);
  if (!queues_.running())
    queues_.graph().note_access(use.ptr, size_t(use.count) * use.size, use.write);
}

int64_t StrictOps::floats_to_end(const float* ptr) const {
  return int64_t(queues_.races().bytes_to_end(ptr) / sizeof(float));
}

void StrictOps::relu_forward(const float* x, float* y, int64_t n) const {
  enqueue("relu_forward", {{x, n, false}, {y, n, true}},
          [=, &o = inner_] { o.relu_forward(x, y, n); });
}
void StrictOps::relu_backward(const float* y, const float* dy, float* dx, int64_t n) const {
  enqueue("relu_backward", {{y, n, false}, {dy, n, false}, {dx, n, true}},
          [=, &o = inner_] { o.relu_backward(y, dy, dx, n); });
}
void StrictOps::gelu_forward(const float* x, float* y, int64_t n) const {
  enqueue("gelu_forward", {{x, n, false}, {y, n, true}},
          [=, &o = inner_] { o.gelu_forward(x, y, n); });
}
void StrictOps::gelu_backward(const float* x, const float* dy, float* dx, int64_t n) const {
  enqueue("gelu_backward", {{x, n, false}, {dy, n, false}, {dx, n, true}},
          [=, &o = inner_] { o.gelu_backward(x, dy, dx, n); });
}
void StrictOps::sum_arrays(const float* const* xs, int count, float* y, int64_t n) const {
  std::vector<const float*> inputs(xs, xs + count);  // the caller's array may not outlive the call
  for (const float* x : inputs) declare("sum_arrays", {x, n, false});
  enqueue("sum_arrays", {{y, n, true}}, [=, &o = inner_, inputs = std::move(inputs)] {
    o.sum_arrays(inputs.data(), count, y, n);
  });
}
void StrictOps::dequantize_u8(const uint8_t* x, int64_t n, int64_t row, int64_t group,
                              const float* table, float* y) const {
  const int64_t groups = group > 0 ? (row + group - 1) / group : 0;
  enqueue("dequantize_u8", {{x, n, false, 1}, {table, groups * 256, false}, {y, n, true}},
          [=, &o = inner_] { o.dequantize_u8(x, n, row, group, table, y); });
}
void StrictOps::scale(const float* x, float s, float* y, int64_t n) const {
  enqueue("scale", {{x, n, false}, {y, n, true}}, [=, &o = inner_] { o.scale(x, s, y, n); });
}
void StrictOps::accumulate(const float* x, float* y, int64_t n) const {
  enqueue("accumulate", {{x, n, false}, {y, n, true}}, [=, &o = inner_] { o.accumulate(x, y, n); });
}
void StrictOps::scale_in_place(float s, float* y, int64_t n) const {
  enqueue("scale_in_place", {{y, n, true}}, [=, &o = inner_] { o.scale_in_place(s, y, n); });
}
void StrictOps::multiply(const float* a, const float* b, float* y, int64_t n) const {
  enqueue("multiply", {{a, n, false}, {b, n, false}, {y, n, true}},
          [=, &o = inner_] { o.multiply(a, b, y, n); });
}
void StrictOps::fill(float value, float* y, int64_t n) const {
  enqueue("fill", {{y, n, true}}, [=, &o = inner_] { o.fill(value, y, n); });
}
void StrictOps::copy(const float* x, float* y, int64_t n) const {
  enqueue("copy", {{x, n, false}, {y, n, true}}, [=, &o = inner_] { o.copy(x, y, n); });
}
void StrictOps::scale_by(const float* x, const float* s, float factor, float* y, int64_t n) const {
  enqueue("scale_by", {{x, n, false}, {s, 1, false}, {y, n, true}},
          [=, &o = inner_] { o.scale_by(x, s, factor, y, n); });
}
void StrictOps::dropout_masks(const ops::DropoutMasks& d, float* mask) const {
  std::function<void()> kernel = [=, &o = inner_] { o.dropout_masks(d, mask); };
  // The generator's state from memory, read when the kernel runs, as a GPU reads mapped pinned
  // memory: pinned it must be (a GPU cannot read pageable host memory), and unchanged until then.
  if (d.step_key) {
    if (!queues_.pinned(d.step_key))
      throw OrderingError(
          "dropout_masks reads the generator's state from host memory that is not pinned (a GPU "
          "kernel cannot read pageable memory)");
    kernel = queues_.reading_pinned(d.step_key, sizeof(uint64_t), "the dropout generator's state",
                                    "dropout_masks", std::move(kernel));
  }
  enqueue("dropout_masks", {{mask, d.rows * d.per_row, true}}, std::move(kernel));
}
void StrictOps::gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                     const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                     int64_t ldc) const {
  enqueue(
      "gemm",
      {{a, gemm_extent(trans_a, m, k, lda), false},
       {b, gemm_extent(trans_b, k, n, ldb), false},
       {c, gemm_extent(false, m, n, ldc), true}},
      [=, &o = inner_] { o.gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
}
void StrictOps::linear_forward(const float* x, const float* w, const float* b, int64_t rows,
                               int64_t in, int64_t out, float* y) const {
  enqueue("linear_forward",
          {{x, rows * in, false}, {w, out * in, false}, {b, out, false}, {y, rows * out, true}},
          [=, &o = inner_] { o.linear_forward(x, w, b, rows, in, out, y); });
}
void StrictOps::linear_backward(const float* x, const float* w, const float* dy, int64_t rows,
                                int64_t in, int64_t out, float* dw, float* db, float* dx) const {
  enqueue("linear_backward",
          {{x, rows * in, false},
           {w, out * in, false},
           {dy, rows * out, false},
           {dw, out * in, true},
           {db, out, true},
           {dx, rows * in, true}},
          [=, &o = inner_] { o.linear_backward(x, w, dy, rows, in, out, dw, db, dx); });
}
void StrictOps::add_row(const float* x, const float* row, int64_t rows, int64_t width,
                        float* y) const {
  enqueue("add_row", {{x, rows * width, false}, {row, width, false}, {y, rows * width, true}},
          [=, &o = inner_] { o.add_row(x, row, rows, width, y); });
}
void StrictOps::add_column_sums(const float* x, int64_t rows, int64_t width, float* sums) const {
  enqueue("add_column_sums", {{x, rows * width, false}, {sums, width, true}},
          [=, &o = inner_] { o.add_column_sums(x, rows, width, sums); });
}
void StrictOps::gather_rows(const float* table, const int64_t* ids, int64_t rows, int64_t width,
                            float* y) const {
  enqueue("gather_rows",
          {{table, floats_to_end(table), false},
           {ids, rows, false, sizeof(int64_t)},
           {y, rows * width, true}},
          [=, &o = inner_] { o.gather_rows(table, ids, rows, width, y); });
}
void StrictOps::token_ids(const float* x, int64_t n, int64_t vocab, int64_t* ids,
                          float* check) const {
  if (!check)  // the synchronous form: the answer is the host's before the call returns
    throw std::logic_error(
        "strict device: token_ids without a check slot would read device memory back at issue");
  enqueue("token_ids",
          {{x, n, false}, {ids, n, true, sizeof(int64_t)}, {check, kern::kInputCheckFloats, true}},
          [=, &o = inner_] { o.token_ids(x, n, vocab, ids, check); });
}
void StrictOps::scatter_add_rows(const float* x, const int64_t* ids, int64_t rows, int64_t width,
                                 float* table, int64_t table_rows) const {
  enqueue("scatter_add_rows",
          {{x, rows * width, false},
           {ids, rows, false, sizeof(int64_t)},
           {table, table_rows * width, true}},
          [=, &o = inner_] { o.scatter_add_rows(x, ids, rows, width, table, table_rows); });
}
void StrictOps::conv2d_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                               const float* bias, float* y, const Scratch& scratch) const {
  conv_forward("conv2d_forward", g, x, w, bias, y, scratch, /*relu=*/false);
}
void StrictOps::conv2d_relu_forward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                    const float* bias, float* y, const Scratch& scratch) const {
  conv_forward("conv2d_relu_forward", g, x, w, bias, y, scratch, /*relu=*/true);
}
float* StrictOps::conv_workspace(const Scratch& scratch, int64_t need, Tensor& taken) const {
  if (scratch.reserved || need <= 0) return scratch.reserved;
  // Given none, the kernel takes its workspace at issue and gives it back at once (stream order
  // keeps it the kernel's), as CudaOps does (ops/cuda/cuda_conv.cu). That is the op's host code,
  // which a replayed graph step drops with the launch (device/graph_replay_ops.hpp): so here too.
  if (queues_.graph().mode() == StrictGraph::Mode::Replaying) return nullptr;
  taken = Tensor::empty({need}, memory_, stream_);
  return taken.device_ptr();
}
void StrictOps::conv_forward(const char* kernel, const ops::Conv2dGeometry& g, const float* x,
                             const float* w, const float* bias, float* y, const Scratch& scratch,
                             bool relu) const {
  const int64_t need = inner_.conv2d_scratch_floats(g, bias != nullptr);
  Tensor taken;
  float* ws = conv_workspace(scratch, need, taken);
  enqueue(kernel,
          {{x, g.batch * g.in_channels * g.in_h * g.in_w, false},
           {w, g.out_channels * g.col_rows(), false},
           {bias, g.out_channels, false},
           {ws, need, true},
           {y, g.batch * g.out_channels * g.out_pixels(), true}},
          [=, &o = inner_, &memory = memory_, stream = stream_] {
            const Scratch scratch{&memory, stream, ws};
            if (relu)
              o.conv2d_relu_forward(g, x, w, bias, y, scratch);
            else
              o.conv2d_forward(g, x, w, bias, y, scratch);
          });
}
void StrictOps::conv2d_backward(const ops::Conv2dGeometry& g, const float* x, const float* w,
                                const float* dy, float* dx, float* dw, float* dbias,
                                const Scratch& scratch) const {
  const int64_t need = inner_.conv2d_scratch_floats(g, dbias != nullptr);
  Tensor taken;
  float* ws = conv_workspace(scratch, need, taken);
  const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w;
  enqueue("conv2d_backward",
          {{x, xs, false},
           {w, g.out_channels * g.col_rows(), false},
           {dy, g.batch * g.out_channels * g.out_pixels(), false},
           {ws, need, true},
           {dx, xs, true},
           {dw, g.out_channels * g.col_rows(), true},
           {dbias, g.out_channels, true}},
          [=, &o = inner_, &memory = memory_, stream = stream_] {
            o.conv2d_backward(g, x, w, dy, dx, dw, dbias, Scratch{&memory, stream, ws});
          });
}
void StrictOps::linear_relu_forward(const float* x, const float* w, const float* b, int64_t rows,
                                    int64_t in, int64_t out, float* y) const {
  enqueue("linear_relu_forward",
          {{x, rows * in, false}, {w, out * in, false}, {b, out, false}, {y, rows * out, true}},
          [=, &o = inner_] { o.linear_relu_forward(x, w, b, rows, in, out, y); });
}
void StrictOps::relu_backward_column_sums(const float* y, const float* dy, int64_t rows,
                                          int64_t width, float* dx, float* sums) const {
  const int64_t n = rows * width;
  enqueue("relu_backward_column_sums",
          {{y, n, false}, {dy, n, false}, {dx, n, true}, {sums, width, true}},
          [=, &o = inner_] { o.relu_backward_column_sums(y, dy, rows, width, dx, sums); });
}
void StrictOps::maxpool2d_relu_backward(const ops::Pool2dGeometry& g, const float* x,
                                        const float* dy, float* dx) const {
  enqueue("maxpool2d_relu_backward",
          {{x, image(g), false}, {dy, pooled(g), false}, {dx, image(g), true}},
          [=, &o = inner_] { o.maxpool2d_relu_backward(g, x, dy, dx); });
}
void StrictOps::maxpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  enqueue("maxpool2d_forward", {{x, image(g), false}, {y, pooled(g), true}},
          [=, &o = inner_] { o.maxpool2d_forward(g, x, y); });
}
void StrictOps::maxpool2d_backward(const ops::Pool2dGeometry& g, const float* x, const float* dy,
                                   float* dx) const {
  enqueue("maxpool2d_backward",
          {{x, image(g), false}, {dy, pooled(g), false}, {dx, image(g), true}},
          [=, &o = inner_] { o.maxpool2d_backward(g, x, dy, dx); });
}
void StrictOps::avgpool2d_forward(const ops::Pool2dGeometry& g, const float* x, float* y) const {
  enqueue("avgpool2d_forward", {{x, image(g), false}, {y, pooled(g), true}},
          [=, &o = inner_] { o.avgpool2d_forward(g, x, y); });
}
void StrictOps::avgpool2d_backward(const ops::Pool2dGeometry& g, const float* dy, float* dx) const {
  enqueue("avgpool2d_backward", {{dy, pooled(g), false}, {dx, image(g), true}},
          [=, &o = inner_] { o.avgpool2d_backward(g, dy, dx); });
}
void StrictOps::global_avgpool_forward(int64_t batch, int64_t channels, int64_t pixels,
                                       const float* x, float* y) const {
  enqueue("global_avgpool_forward",
          {{x, batch * channels * pixels, false}, {y, batch * channels, true}},
          [=, &o = inner_] { o.global_avgpool_forward(batch, channels, pixels, x, y); });
}
void StrictOps::global_avgpool_backward(int64_t batch, int64_t channels, int64_t pixels,
                                        const float* dy, float* dx) const {
  enqueue("global_avgpool_backward",
          {{dy, batch * channels, false}, {dx, batch * channels * pixels, true}},
          [=, &o = inner_] { o.global_avgpool_backward(batch, channels, pixels, dy, dx); });
}
void StrictOps::batchnorm_forward_train(const float* x, const ops::BatchNormShape& s,
                                        const float* gamma, const float* beta, float eps,
                                        float momentum, float* running_mean, float* running_var,
                                        float* mean, float* invstd, float* y) const {
  const int64_t all = s.n * s.c * s.hw;
  enqueue("batchnorm_forward_train",
          {{x, all, false},
           {gamma, s.c, false},
           {beta, s.c, false},
           {running_mean, s.c, true},
           {running_var, s.c, true},
           {mean, s.c, true},
           {invstd, s.c, true},
           {y, all, true}},
          [=, &o = inner_] {
            o.batchnorm_forward_train(x, s, gamma, beta, eps, momentum, running_mean, running_var,
                                      mean, invstd, y);
          });
}
void StrictOps::batchnorm_forward_eval(const float* x, const ops::BatchNormShape& s,
                                       const float* gamma, const float* beta,
                                       const float* running_mean, const float* running_var,
                                       float eps, float* mean, float* invstd, float* y) const {
  const int64_t all = s.n * s.c * s.hw;
  enqueue("batchnorm_forward_eval",
          {{x, all, false},
           {gamma, s.c, false},
           {beta, s.c, false},
           {running_mean, s.c, false},
           {running_var, s.c, false},
           {mean, s.c, true},
           {invstd, s.c, true},
           {y, all, true}},
          [=, &o = inner_] {
            o.batchnorm_forward_eval(x, s, gamma, beta, running_mean, running_var, eps, mean,
                                     invstd, y);
          });
}
void StrictOps::batchnorm_backward(const float* x, const float* dy, const ops::BatchNormShape& s,
                                   const float* gamma, const float* mean, const float* invstd,
                                   bool batch_stats, float* dx, float* dgamma, float* dbeta) const {
  const int64_t all = s.n * s.c * s.hw;
  enqueue("batchnorm_backward",
          {{x, all, false},
           {dy, all, false},
           {gamma, s.c, false},
           {mean, s.c, false},
           {invstd, s.c, false},
           {dx, all, true},
           {dgamma, s.c, true},
           {dbeta, s.c, true}},
          [=, &o = inner_] {
            o.batchnorm_backward(x, dy, s, gamma, mean, invstd, batch_stats, dx, dgamma, dbeta);
          });
}
void StrictOps::layer_norm_forward(const float* x, const float* w, const float* b, int64_t rows,
                                   int64_t dim, double eps, float* y, float* stats) const {
  enqueue("layer_norm_forward",
          {{x, rows * dim, false},
           {w, dim, false},
           {b, dim, false},
           {y, rows * dim, true},
           {stats, 2 * rows, true}},
          [=, &o = inner_] { o.layer_norm_forward(x, w, b, rows, dim, eps, y, stats); });
}
void StrictOps::layer_norm_backward(const float* x, const float* dy, const float* w,
                                    const float* stats, int64_t rows, int64_t dim, float* dw,
                                    float* db, float* dx) const {
  enqueue("layer_norm_backward",
          {{x, rows * dim, false},
           {dy, rows * dim, false},
           {w, dim, false},
           {stats, 2 * rows, false},
           {dw, dim, true},
           {db, dim, true},
           {dx, rows * dim, true}},
          [=, &o = inner_] { o.layer_norm_backward(x, dy, w, stats, rows, dim, dw, db, dx); });
}
void StrictOps::causal_softmax(float* p, int64_t T, int64_t count) const {
  enqueue("causal_softmax", {{p, T * T * count, true}},
          [=, &o = inner_] { o.causal_softmax(p, T, count); });
}
void StrictOps::causal_softmax_backward(const float* p, float* g, int64_t T, int64_t count) const {
  enqueue("causal_softmax_backward", {{p, T * T * count, false}, {g, T * T * count, true}},
          [=, &o = inner_] { o.causal_softmax_backward(p, g, T, count); });
}
void StrictOps::softmax_xent_forward(const float* logits, const int32_t* labels, int64_t n,
                                     int64_t k, float* grad, const ops::XentOutputs& out) const {
  enqueue("softmax_xent_forward",
          {{logits, n * k, false},
           {grad, n * k, true},
           {out.loss, 1, true},
           {out.totals, 2, true, sizeof(double)}},
          labels_read(logits, labels, n, k, grad, out));
}
std::function<void()> StrictOps::labels_read(const float* logits, const int32_t* labels, int64_t n,
                                             int64_t k, float* grad,
                                             const ops::XentOutputs& out) const {
  // Pinned labels are read when the kernel runs, as a GPU copies from pinned memory (a captured
  // graph reads them again each replay); pageable ones are host memory the host may reuse before
  // the kernel runs: staged now, as cudaMemcpyAsync stages pageable memory.
  if (queues_.pinned(labels))
    return queues_.reading_pinned(
        labels, sizeof(int32_t) * size_t(n), "the batch's labels", "the loss",
        [=, &o = inner_] { o.softmax_xent_forward(logits, labels, n, k, grad, out); });
  return [=, &o = inner_, staged = std::vector<int32_t>(labels, labels + n)] {
    o.softmax_xent_forward(logits, staged.data(), n, k, grad, out);
  };
}
void StrictOps::count_nonfinite_into(const float* x, int64_t n, float* count) const {
  enqueue("count_nonfinite_into", {{x, n, false}, {count, ops::kCountFloats, true}},
          [=, &o = inner_] { o.count_nonfinite_into(x, n, count); });
}
int64_t StrictOps::encode_weights(const WeightCodec& codec, const float* x, int64_t n,
                                  uint32_t* words, float* side) const {
  return blocking([&] { return inner_.encode_weights(codec, x, n, words, side); });
}
int64_t StrictOps::decode_weights(const WeightCodec& codec, const uint32_t* words, int64_t n,
                                  const float* side, float* y) const {
  return blocking([&] { return inner_.decode_weights(codec, words, n, side, y); });
}
void StrictOps::sgd_update(const ops::SgdUpdate& u, int64_t n, float* w, const float* g, float* b,
                           const float* skip) const {
  enqueue("sgd_update",
          {{w, n, true},
           {g, n, false},
           {b, n, true},
           {skip, ops::kCountFloats, false},
           {u.per_step, ops::kSgdPerStep, false}},
          [=, &o = inner_] { o.sgd_update(u, n, w, g, b, skip); });
}
void StrictOps::adamw_update(const ops::AdamWUpdate& u, int64_t n, float* w, const float* g,
                             float* m, float* v, const float* skip) const {
  enqueue("adamw_update",
          {{w, n, true},
           {g, n, false},
           {m, n, true},
           {v, n, true},
           {skip, ops::kCountFloats, false},
           {u.per_step, ops::kAdamWPerStep, false}},
          [=, &o = inner_] { o.adamw_update(u, n, w, g, m, v, skip); });
}

}  // namespace wt
