#include "ops/host/gemm_bf16.hpp"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ops/host/bf16.hpp"
#include "ops/host/gemm.hpp"

#if defined(WT_GEMM_DNNL)
#include <dnnl.hpp>
#endif

namespace wt::ops {

#if defined(WT_GEMM_DNNL)
namespace {

using dnnl::memory;
using Key = std::array<int64_t, 9>;

// One matmul primitive per shape, made once (a training step repeats the same few shapes), with
// grow-only buffers for the bf16 copies of A and B. Per thread, as the convolution cache is.
class MatmulCache {
 public:
  MatmulCache() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}
  const dnnl::matmul& find(const Key& key);
  uint16_t* a_copy(int64_t n) { return grow(a_, n); }
  uint16_t* b_copy(int64_t n) { return grow(b_, n); }
  dnnl::engine& engine() { return engine_; }
  dnnl::stream& stream() { return stream_; }

 private:
  static uint16_t* grow(std::vector<uint16_t>& v, int64_t n) {
    if (int64_t(v.size()) < n) v.resize(size_t(n));
    return v.data();
  }
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::map<Key, dnnl::matmul> cache_;
  std::vector<uint16_t> a_, b_;
};

MatmulCache& cache() {
  thread_local MatmulCache instance;
  return instance;
}

float bits_to_float(int64_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
int64_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return int64_t(u);
}

// The dense copies keep the stored layout: op(A) [m, k] is A [m, k] or A [k, m] transposed,
// which a matmul takes as strides rather than as a copy.
memory::dims strides_of(bool trans, int64_t cols_of_op, int64_t rows_of_op) {
  return trans ? memory::dims{1, rows_of_op} : memory::dims{cols_of_op, 1};
}

// key: trans_a, trans_b, m, n, k, ldc, alpha bits, beta bits, unused.
const dnnl::matmul& MatmulCache::find(const Key& key) {
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  const bool trans_a = key[0], trans_b = key[1];
  const int64_t m = key[2], n = key[3], k = key[4], ldc = key[5];
  const float alpha = bits_to_float(key[6]), beta = bits_to_float(key[7]);
  const auto bf16 = memory::data_type::bf16, f32 = memory::data_type::f32;
  const memory::desc a_md({m, k}, bf16, strides_of(trans_a, k, m)),
      b_md({k, n}, bf16, strides_of(trans_b, n, k)), c_md({m, n}, f32, memory::dims{ldc, 1});
  dnnl::primitive_attr attr;
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);  // C = alpha A B + beta C
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine_);
  return cache_.emplace(key, dnnl::matmul(pd)).first->second;
}

}  // namespace

void gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  MatmulCache& mc = cache();
  const dnnl::matmul& mm =
      mc.find(Key{trans_a, trans_b, m, n, k, ldc, float_bits(alpha), float_bits(beta), 0});
  // Stored A is [m, k] (or [k, m] when transposed); likewise B. Copy each densely as bf16.
  uint16_t* a16 = mc.a_copy(m * k);
  uint16_t* b16 = mc.b_copy(k * n);
  to_bf16_rows(a, trans_a ? k : m, trans_a ? m : k, lda, a16);
  to_bf16_rows(b, trans_b ? n : k, trans_b ? k : n, ldb, b16);
  const auto bf16 = memory::data_type::bf16, f32 = memory::data_type::f32;
  const memory::desc a_md({m, k}, bf16, strides_of(trans_a, k, m)),
      b_md({k, n}, bf16, strides_of(trans_b, n, k)), c_md({m, n}, f32, memory::dims{ldc, 1});
  mm.execute(mc.stream(), {{DNNL_ARG_SRC, memory(a_md, mc.engine(), a16)},
                           {DNNL_ARG_WEIGHTS, memory(b_md, mc.engine(), b16)},
                           {DNNL_ARG_DST, memory(c_md, mc.engine(), c)}});
  mc.stream().wait();
}

#else

void gemm_bf16(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
               int64_t, float, float*, int64_t) {
  throw std::logic_error("bf16 GEMM needs the oneDNN build (WAVETRAIN_GEMM=DNNL)");
}

#endif

}  // namespace wt::ops
