// wt_op_bench: the ops of the ops interface on the CUDA backend (CudaOps), timed at the shapes of
// the shipped models' layers, for the per-op table of tools/gpu-check.sh --ops. The cases come
// from bench/torch_op_reference.py --cases (a line each: id, op, integer parameters), so the
// PyTorch side times exactly these shapes, and the same way: inputs random and made first, one
// untimed call, then REPS calls captured as one CUDA graph, 3 untimed replays and REPLAYS timed
// ones between CUDA events; the median replay over REPS is the per-call time. An op that cannot
// be captured (one that reads a result back to the host) is timed eagerly the same way.
//
//   wt_op_bench CASES [--reps R] [--replays K] [--only TEXT]
//
// Prints "id=K us=T mode=graph|eager" per case. Exit status: 0, 1 a case failed, 2 usage, 77 no
// GPU seen.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/cuda/cuda_ops.hpp"
#include "ops/portable/rows.hpp"
#include "util/cuda_check.hpp"

namespace {

struct Case {
  int id = -1;
  std::string op;
  std::map<std::string, int64_t> params;
  int64_t operator[](const char* key) const {
    const auto it = params.find(key);
    if (it == params.end()) throw std::invalid_argument("case " + op + ": no parameter " + key);
    return it->second;
  }
};

// "id=3 op=linear_forward rows=64 inp=784 out=256 bias=1 calls=mlp:1": calls= is for the table.
Case parse_case(const std::string& line) {
  Case c;
  std::istringstream in(line);
  std::string token;
  while (in >> token) {
    const auto eq = token.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = token.substr(0, eq), value = token.substr(eq + 1);
    if (key == "id")
      c.id = std::stoi(value);
    else if (key == "op")
      c.op = value;
    else if (key != "calls")
      c.params[key] = std::stoll(value);
  }
  return c;
}

// Device arrays for one case, random (never zeros: they hide unwritten outputs and can run faster).
class Buffers {
 public:
  ~Buffers() {
    for (void* p : owned_) cudaFree(p);
    for (void* p : pinned_) cudaFreeHost(p);
  }
  float* random(int64_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = u(rng_);
    return upload(v);
  }
  // Integer ids in [0, vocab), as floats (token_ids' input) or as int64 (the gathers').
  float* id_floats(int64_t n, int64_t vocab) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = float(rng_() % uint64_t(vocab));
    return upload(v);
  }
  int64_t* ids(int64_t n, int64_t vocab) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (auto& x : v) x = int64_t(rng_() % uint64_t(vocab));
    return upload(v);
  }
  // Labels in pinned host memory, as the trainer passes them in a graphed step (a captured copy
  // from pageable memory is refused: it would read freed memory at a later replay).
  int32_t* pinned_labels(int64_t n, int64_t k) {
    void* p = nullptr;
    WT_CUDA_CHECK(cudaMallocHost(&p, std::max<size_t>(1, size_t(n)) * sizeof(int32_t)));
    pinned_.push_back(p);
    auto* v = static_cast<int32_t*>(p);
    for (int64_t i = 0; i < n; ++i) v[i] = int32_t(rng_() % uint64_t(k));
    return v;
  }
  template <class T>
  T* upload(const std::vector<T>& v) {
    void* p = nullptr;
    WT_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(1, v.size()) * sizeof(T)));
    owned_.push_back(p);
    WT_CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return static_cast<T*>(p);
  }

 private:
  std::mt19937_64 rng_{12345};
  std::vector<void*> owned_;
  std::vector<void*> pinned_;  // cudaMallocHost
};

using Op = std::function<void()>;
using wt::cuda::CudaOps;

Op elementwise_op(const Case& c, const CudaOps& o, Buffers& b) {
  const int64_t n = c["n"];
  float *x = b.random(n), *y = b.random(n), *dy = b.random(n);
  if (c.op == "relu_forward") return [=, &o] { o.relu_forward(x, y, n); };
  if (c.op == "relu_backward") return [=, &o] { o.relu_backward(x, dy, y, n); };
  if (c.op == "gelu_forward") return [=, &o] { o.gelu_forward(x, y, n); };
  if (c.op == "gelu_backward") return [=, &o] { o.gelu_backward(x, dy, y, n); };
  if (c.op == "fill") return [=, &o] { o.fill(0.0f, y, n); };
  if (c.op == "count_nonfinite") return [=, &o] { o.count_nonfinite_into(x, n, dy); };
  if (c.op == "scale_by") return [=, &o] { o.scale_by(x, dy, 0.5f, y, n); };
  if (c.op == "sum_arrays") {
    std::vector<const float*> xs = {x, dy};
    for (int64_t k = 2; k < c["count"]; ++k) xs.push_back(b.random(n));
    return [=, &o] { o.sum_arrays(xs.data(), int(xs.size()), y, n); };
  }
  if (c.op == "sgd_update") {
    wt::ops::SgdUpdate u{0.01f, 0.0f, 0.9f, false, false};
    return [=, &o] { o.sgd_update(u, n, y, x, dy, nullptr); };
  }
  if (c.op == "adamw_update") {
    float *m = b.random(n), *v = b.random(n, 0.0f, 1.0f);
    wt::ops::AdamWUpdate u{0.99999f, 0.9f, 0.1f, 0.999f, 0.001f, 1e-3f, 0.5f, 1e-8f};
    return [=, &o] { o.adamw_update(u, n, y, x, m, v, nullptr); };
  }
  return nullptr;
}

Op matrix_op(const Case& c, const CudaOps& o, Buffers& b) {
  if (c.op == "gemm") {
    const bool ta = c["ta"], tb = c["tb"];
    const int64_t m = c["m"], n = c["n"], k = c["k"];
    float *a = b.random(m * k), *bm = b.random(k * n), *y = b.random(m * n);
    return [=, &o] { o.OpsBackend::gemm(ta, tb, m, n, k, 1.0f, a, bm, 0.0f, y); };
  }
  if (c.op == "gemm_batched") {  // contiguous matrices, one after another
    const bool ta = c["ta"], tb = c["tb"];
    const int64_t m = c["m"], n = c["n"], k = c["k"], batch = c["batch"];
    float *a = b.random(batch * m * k), *bm = b.random(batch * k * n);
    float* y = b.random(batch * m * n);
    return [=, &o] {
      o.gemm_batched(ta, tb, m, n, k, 1.0f, a, ta ? m : k, m * k, bm, tb ? k : n, k * n, 0.0f, y, n,
                     m * n, batch);
    };
  }
  const int64_t rows = c["rows"], in = c["inp"], out = c["out"];
  float *x = b.random(rows * in), *w = b.random(out * in), *y = b.random(rows * out);
  float* bias = c["bias"] ? b.random(out) : nullptr;
  if (c.op == "linear_forward") return [=, &o] { o.linear_forward(x, w, bias, rows, in, out, y); };
  float *dw = b.random(out * in), *dx = c["dx"] ? b.random(rows * in) : nullptr;
  return [=, &o] { o.linear_backward(x, w, y, rows, in, out, dw, bias, dx); };
}

Op image_op(const Case& c, const CudaOps& o, Buffers& b) {
  if (c.op.rfind("conv2d", 0) == 0) {
    const wt::ops::Conv2dGeometry g{c["batch"], c["cin"], c["h"],      c["w"],
                                    c["cout"],  c["k"],   c["stride"], c["pad"]};
    const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w;
    const int64_t ws = g.out_channels * g.in_channels * g.kernel * g.kernel;
    const int64_t ys = g.batch * g.out_channels * g.out_pixels();
    float *x = b.random(xs), *w = b.random(ws), *y = b.random(ys);
    float* bias = c["bias"] ? b.random(g.out_channels) : nullptr;
    if (c.op == "conv2d_forward") return [=, &o] { o.conv2d_forward(g, x, w, bias, y, {}); };
    float *dw = b.random(ws), *dx = c["dx"] ? b.random(xs) : nullptr;
    return [=, &o] { o.conv2d_backward(g, x, w, y, dx, dw, bias, {}); };
  }
  if (c.op.find("pool2d") != std::string::npos) {
    const wt::ops::Pool2dGeometry g{c["batch"], c["c"],      c["h"],  c["w"],
                                    c["k"],     c["stride"], c["pad"]};
    const int64_t xs = g.batch * g.channels * g.in_h * g.in_w;
    float *x = b.random(xs), *dx = b.random(xs),
          *y = b.random(g.batch * g.channels * g.out_h() * g.out_w());
    if (c.op == "maxpool2d_forward") return [=, &o] { o.maxpool2d_forward(g, x, y); };
    if (c.op == "maxpool2d_backward") return [=, &o] { o.maxpool2d_backward(g, x, y, dx); };
    if (c.op == "avgpool2d_forward") return [=, &o] { o.avgpool2d_forward(g, x, y); };
    if (c.op == "avgpool2d_backward") return [=, &o] { o.avgpool2d_backward(g, y, dx); };
  }
  if (c.op.rfind("global_avgpool", 0) == 0) {
    const int64_t batch = c["batch"], ch = c["c"], pixels = c["pixels"];
    float *x = b.random(batch * ch * pixels), *y = b.random(batch * ch);
    if (c.op == "global_avgpool_forward")
      return [=, &o] { o.global_avgpool_forward(batch, ch, pixels, x, y); };
    return [=, &o] { o.global_avgpool_backward(batch, ch, pixels, y, x); };
  }
  if (c.op.rfind("batchnorm", 0) == 0) {
    const wt::ops::BatchNormShape s{c["n"], c["c"], c["hw"]};
    const int64_t n = s.n * s.c * s.hw;
    float *x = b.random(n), *y = b.random(n), *dx = b.random(n), *gamma = b.random(s.c);
    float *beta = b.random(s.c), *rm = b.random(s.c), *rv = b.random(s.c, 0.5f, 1.5f);
    float *mean = b.random(s.c), *invstd = b.random(s.c, 0.5f, 1.5f), *dg = b.random(s.c);
    if (c.op == "batchnorm_forward_train")
      return [=, &o] {
        o.batchnorm_forward_train(x, s, gamma, beta, 1e-5f, 0.1f, rm, rv, mean, invstd, y);
      };
    return [=, &o] { o.batchnorm_backward(x, y, s, gamma, mean, invstd, true, dx, dg, beta); };
  }
  return nullptr;
}

Op row_op(const Case& c, const CudaOps& o, Buffers& b) {
  if (c.op.rfind("layer_norm", 0) == 0) {
    const int64_t rows = c["rows"], dim = c["dim"];
    float *x = b.random(rows * dim), *y = b.random(rows * dim), *dx = b.random(rows * dim);
    float *w = b.random(dim), *bias = b.random(dim), *stats = b.random(2 * rows);
    float *dw = b.random(dim), *db = b.random(dim);
    o.layer_norm_forward(x, w, bias, rows, dim, 1e-5, y, stats);  // real statistics
    if (c.op == "layer_norm_forward")
      return [=, &o] { o.layer_norm_forward(x, w, bias, rows, dim, 1e-5, y, stats); };
    return [=, &o] { o.layer_norm_backward(x, y, w, stats, rows, dim, dw, db, dx); };
  }
  if (c.op == "token_ids") {
    const int64_t n = c["n"], vocab = c["vocab"];
    float* x = b.id_floats(n, vocab);
    int64_t* ids = b.ids(n, vocab);
    float* check = b.random(wt::kern::kInputCheckFloats);  // the executor's form: no read back
    return [=, &o] { o.token_ids(x, n, vocab, ids, check); };
  }
  if (c.op == "gather_rows" || c.op == "scatter_add_rows") {
    const int64_t rows = c["rows"], vocab = c["vocab"], width = c["width"];
    int64_t* ids = b.ids(rows, vocab);
    float *table = b.random(vocab * width), *y = b.random(rows * width);
    if (c.op == "gather_rows") return [=, &o] { o.gather_rows(table, ids, rows, width, y); };
    return [=, &o] { o.scatter_add_rows(y, ids, rows, width, table, vocab); };
  }
  if (c.op == "add_row" || c.op == "add_column_sums") {
    const int64_t rows = c["rows"], width = c["width"];
    float *x = b.random(rows * width), *row = b.random(width), *y = b.random(rows * width);
    if (c.op == "add_row") return [=, &o] { o.add_row(x, row, rows, width, y); };
    return [=, &o] { o.add_column_sums(x, rows, width, row); };
  }
  if (c.op == "causal_softmax" || c.op == "causal_softmax_backward") {
    const int64_t t = c["t"], count = c["count"];
    float *p = b.random(count * t * t), *g = b.random(count * t * t);
    o.causal_softmax(p, t, count);  // probabilities for the backward
    if (c.op == "causal_softmax") return [=, &o] { o.causal_softmax(g, t, count); };
    return [=, &o] { o.causal_softmax_backward(p, g, t, count); };
  }
  if (c.op == "softmax_xent_forward") {
    const int64_t n = c["n"], k = c["k"];
    float *logits = b.random(n * k, -5.0f, 5.0f), *grad = b.random(n * k), *loss = b.random(1);
    auto* totals = b.upload(std::vector<double>{0.0, 0.0});
    const int32_t* labels = b.pinned_labels(n, k);
    wt::ops::XentOutputs out;
    out.per_row = 1.0, out.loss = loss, out.totals = totals;
    return [=, &o] { o.softmax_xent_forward(logits, labels, n, k, grad, out); };
  }
  return nullptr;
}

Op make_op(const Case& c, const CudaOps& o, Buffers& b) {
  using Maker = Op (*)(const Case&, const CudaOps&, Buffers&);
  static const std::map<std::string, Maker> makers = {
      {"relu_forward", elementwise_op},
      {"relu_backward", elementwise_op},
      {"gelu_forward", elementwise_op},
      {"gelu_backward", elementwise_op},
      {"fill", elementwise_op},
      {"count_nonfinite", elementwise_op},
      {"scale_by", elementwise_op},
      {"sum_arrays", elementwise_op},
      {"sgd_update", elementwise_op},
      {"adamw_update", elementwise_op},
      {"gemm", matrix_op},
      {"gemm_batched", matrix_op},
      {"linear_forward", matrix_op},
      {"linear_backward", matrix_op},
      {"conv2d_forward", image_op},
      {"conv2d_backward", image_op},
      {"maxpool2d_forward", image_op},
      {"maxpool2d_backward", image_op},
      {"avgpool2d_forward", image_op},
      {"avgpool2d_backward", image_op},
      {"global_avgpool_forward", image_op},
      {"global_avgpool_backward", image_op},
      {"batchnorm_forward_train", image_op},
      {"batchnorm_backward", image_op},
      {"layer_norm_forward", row_op},
      {"layer_norm_backward", row_op},
      {"token_ids", row_op},
      {"gather_rows", row_op},
      {"scatter_add_rows", row_op},
      {"add_row", row_op},
      {"add_column_sums", row_op},
      {"causal_softmax", row_op},
      {"causal_softmax_backward", row_op},
      {"softmax_xent_forward", row_op},
  };
  const auto it = makers.find(c.op);
  Op op = it == makers.end() ? nullptr : it->second(c, o, b);
  if (!op) throw std::invalid_argument("no such op '" + c.op + "'");
  return op;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Per-call microseconds: the median of `replays` timed runs of `reps` calls (one graph replay,
// else the calls issued eagerly), after one untimed call and 3 untimed runs.
float time_op(cudaStream_t stream, const Op& op, int reps, int replays, std::string& mode) {
  op();
  WT_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  mode = "graph";
  try {
    WT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int r = 0; r < reps; ++r) op();
    WT_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    WT_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } catch (const std::exception&) {  // a read-back in the op: not capturable, timed eagerly
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(stream, &broken);
    if (broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    mode = "eager";
  }
  auto run = [&] {
    if (exec)
      WT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    else
      for (int r = 0; r < reps; ++r) op();
  };
  for (int i = 0; i < 3; ++i) run();
  cudaEvent_t start, stop;
  WT_CUDA_CHECK(cudaEventCreate(&start));
  WT_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> us;
  for (int i = 0; i < replays; ++i) {
    WT_CUDA_CHECK(cudaEventRecord(start, stream));
    run();
    WT_CUDA_CHECK(cudaEventRecord(stop, stream));
    WT_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    WT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1e3f / float(reps));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  return median(us);
}

int usage(const char* why) {
  std::fprintf(stderr,
               "wt_op_bench: %s\nusage: wt_op_bench CASES [--reps R] [--replays K] [--only TEXT]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no case file (bench/torch_op_reference.py --cases > FILE)");
  int reps = 20, replays = 25;
  std::string only;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (flag == "--replays")
      replays = std::atoi(argv[i + 1]);
    else if (flag == "--only")
      only = argv[i + 1];
    else
      return usage(("unknown argument " + flag).c_str());
  }
  if (reps < 1 || replays < 1) return usage("--reps and --replays take positive counts");
  std::ifstream file(argv[1]);
  if (!file) return usage((std::string("cannot read ") + argv[1]).c_str());
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device on this machine\n");
    return 77;
  }
  int failed = 0;
  try {
    cudaStream_t stream = nullptr;
    WT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    {
      const CudaOps ops(stream);
      std::string line;
      while (std::getline(file, line)) {
        const Case c = parse_case(line);
        if (c.id < 0 || (!only.empty() && c.op.find(only) == std::string::npos)) continue;
        try {
          Buffers buffers;
          const Op op = make_op(c, ops, buffers);
          std::string mode;
          const float us = time_op(stream, op, reps, replays, mode);
          std::printf("id=%d us=%.2f mode=%s op=%s\n", c.id, us, mode.c_str(), c.op.c_str());
        } catch (const std::exception& e) {
          WT_CUDA_CHECK(cudaStreamSynchronize(stream));
          std::printf("id=%d failed: %s\n", c.id, e.what());
          ++failed;
        }
        std::fflush(stdout);
      }
    }
    WT_CUDA_CHECK(cudaStreamDestroy(stream));
  } catch (const std::exception& e) {
    std::printf("wt_op_bench: %s\n", e.what());
    return 1;
  }
  return failed ? 1 : 0;
}
