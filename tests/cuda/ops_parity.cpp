#include "ops_parity.hpp"

#include <cstdlib>
#include <cstring>

#include "parity_harness.hpp"

namespace wt::parity {

void* HostMemory::allocate(size_t bytes) { return std::malloc(bytes ? bytes : 1); }
void HostMemory::upload(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void HostMemory::download(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
void HostMemory::release(void* p) { std::free(p); }

namespace {

void elementwise(Harness& t) {
  const int64_t n = 100003;
  auto xv = t.values(n, -4, 4);
  xv[0] = 0.0f;  // relu'(0) = 0 on both sides
  auto x = t.copy_of(xv), b = t.random(n), dy = t.random(n),
       s = t.copy_of(std::vector<float>{0.25f});
  auto relu = t.filled(n, -1), relu_grad = t.filled(n, -1), gelu = t.filled(n, -1);
  auto gelu_grad = t.filled(n, -1), sum = t.filled(n, -1), scaled = t.filled(n, -1);
  auto acc = t.random(n), in_place = t.random(n), product = t.filled(n, -1);
  auto fill = t.filled(n, -1), copy = t.filled(n, -1), seeded = t.filled(n, -1);
  auto mask = t.filled(n, -1), zeroed = t.random(n), relu_view = t.filled(n, -1);
  // A batch's uint8 rows (6 elements, 2 scaling groups of 3) through a 2 x 256 table.
  std::vector<uint8_t> bytes(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) bytes[size_t(i)] = uint8_t((i * 37 + i / 7) & 255);
  std::vector<float> packed(size_t((n + 3) / 4));
  std::memcpy(packed.data(), bytes.data(), bytes.size());
  std::vector<float> table_values(2 * 256);
  for (size_t v = 0; v < table_values.size(); ++v) table_values[v] = float(v) * 0.37f - 20.0f;
  auto raw = t.copy_of(packed), table = t.copy_of(table_values), dequantized = t.filled(n, -1);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.dequantize_u8(reinterpret_cast<const uint8_t*>(SIDE(raw)), n, 6, 3, SIDE(table),
                      SIDE(dequantized));
    ops.relu_forward(SIDE(x), SIDE(relu), n);
    ops.relu_forward(SIDE(x) + 1, SIDE(relu_view) + 1, n - 1);  // unaligned: one float a thread
    ops.relu_backward(SIDE(relu), SIDE(dy), SIDE(relu_grad), n);
    ops.gelu_forward(SIDE(x), SIDE(gelu), n);
    ops.gelu_backward(SIDE(x), SIDE(dy), SIDE(gelu_grad), n);
    const float* three[] = {SIDE(x), SIDE(b), SIDE(dy)};
    ops.sum_arrays(three, 3, SIDE(sum), n);
    ops.scale(SIDE(x), 0.5f, SIDE(scaled), n);
    ops.accumulate(SIDE(x), SIDE(acc), n);
    ops.scale_in_place(-3.0f, SIDE(in_place), n);
    ops.multiply(SIDE(x), SIDE(b), SIDE(product), n);
    ops.fill(2.5f, SIDE(fill), n);
    ops.fill(0.0f, SIDE(zeroed) + 1, n - 2);  // a memset on CUDA: the ends must stay as they were
    ops.copy(SIDE(x), SIDE(copy), n);
    ops.scale_by(SIDE(x), SIDE(s), 3.0f, SIDE(seeded), n);
    // 7 samples of 14285 entries (odd: each row's last pair is half used); 4 entries left at -1.
    ops::DropoutMasks d;
    d.p = 0.3f, d.key = 1234, d.salt = 77, d.first_sample = 40, d.rows = 7, d.per_row = n / 7;
    ops.dropout_masks(d, SIDE(mask));
  });
  t.expect("relu_forward", relu, 0);
  t.expect("relu_forward (a view one float in)", relu_view, 0);
  t.expect("relu_backward", relu_grad, 0);
  t.expect("gelu_forward", gelu, kSame);
  t.expect("gelu_backward", gelu_grad, kSame);
  t.expect("sum_arrays (3)", sum, kSame);
  t.expect("scale", scaled, 0);
  t.expect("accumulate", acc, kSame);
  t.expect("scale_in_place", in_place, 0);
  t.expect("multiply", product, 0);
  t.expect("fill", fill, 0);
  t.expect("fill with zeros (inner range)", zeroed, 0);
  t.expect("copy", copy, 0);
  t.expect("scale_by", seeded, kSame);
  t.expect("dropout_masks (bitwise: integer draws)", mask, 0);
  t.expect("dequantize_u8 (a table lookup)", dequantized, 0);
}

void matrices(Harness& t, double tolerance = kSummed) {
  const int64_t m = 64, n = 96, k = 80;
  auto a = t.random(m * k), b = t.random(k * n), c = t.filled(m * n, 0), ct = t.random(m * n);
  const int64_t rows = 37, in = 50, out = 24;
  auto x = t.random(rows * in), w = t.random(out * in), bias = t.random(out),
       dy = t.random(rows * out);
  auto y = t.filled(rows * out, -1), dw = t.random(out * in), db = t.random(out);
  auto dx = t.filled(rows * in, -1);
  // Batched as attention calls it: 3 products whose operands sit in wider rows (ld > width) with
  // a stride between them, B transposed, beta 0.5. The host loops gemm (OpsBackend's default).
  const int64_t bm = 19, bn = 23, bk = 11, batch = 3, lda = bk + 3, ldb = bk + 1, ldc = bn + 2;
  auto ba = t.random(batch * bm * lda), bb = t.random(batch * bn * ldb);
  auto bc = t.random(batch * bm * ldc);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.gemm_batched(false, true, bm, bn, bk, 0.75f, SIDE(ba), lda, bm * lda, SIDE(bb), ldb,
                     bn * ldb, 0.5f, SIDE(bc), ldc, bm * ldc, batch);
    ops.gemm(false, false, m, n, k, 1.0f, SIDE(a), SIDE(b), 0.0f, SIDE(c));
    // Transposed operands with beta = 1, as the linear layers' backward calls them.
    ops.gemm(true, true, m, n, k, 0.5f, SIDE(a), m, SIDE(b), k, 1.0f, SIDE(ct), n);
    ops.linear_forward(SIDE(x), SIDE(w), SIDE(bias), rows, in, out, SIDE(y));
    ops.linear_backward(SIDE(x), SIDE(w), SIDE(dy), rows, in, out, SIDE(dw), SIDE(db), SIDE(dx));
  });
  t.expect("gemm", c, tolerance);
  t.expect("gemm (A^T B^T, beta 1)", ct, tolerance);
  t.expect("gemm_batched (3, strided, B^T, beta 0.5)", bc, tolerance);
  t.expect("linear_forward", y, tolerance);
  t.expect("linear_backward dw", dw, tolerance);
  t.expect("linear_backward db", db, tolerance);
  t.expect("linear_backward dx", dx, tolerance);
}

void rows_and_embeddings(Harness& t) {
  const int64_t rows = 300, width = 70, vocab = 40;
  auto x = t.random(rows * width), row = t.random(width), y = t.filled(rows * width, -1);
  auto sums = t.random(width), table = t.random(vocab * width),
       gathered = t.filled(rows * width, -1);
  auto scattered = t.random(vocab * width);
  std::vector<float> token_values(static_cast<size_t>(rows));
  for (auto& v : token_values) v = float(t.rng().below(vocab));
  token_values[5] = token_values[9] = 3.0f;  // a repeated id accumulates
  auto tokens = t.copy_of(token_values);
  auto ids = t.copy_of(std::vector<int64_t>(size_t(rows), -1));
  // The device-side check (the executor's form): bad ids at 211 and 77, then a clean call that
  // must not overwrite the record: position 78, the value 40.5 and the bound 40, bit for bit.
  token_values[211] = -1.0f;
  token_values[77] = 40.5f;
  auto bad_tokens = t.copy_of(token_values);
  auto bad_ids = t.copy_of(std::vector<int64_t>(size_t(rows), -1));
  auto check = t.copy_of(std::vector<int64_t>{0, 0});  // a kern::InputCheck, none found
  t.run([&](const OpsBackend& ops, bool device) {
    ops.add_row(SIDE(x), SIDE(row), rows, width, SIDE(y));
    ops.add_column_sums(SIDE(x), rows, width, SIDE(sums));
    ops.token_ids(SIDE(tokens), rows, vocab, SIDE(ids), nullptr);
    float* slot = reinterpret_cast<float*>(SIDE(check));
    ops.token_ids(SIDE(bad_tokens), rows, vocab, SIDE(bad_ids), slot);
    ops.token_ids(SIDE(tokens), rows, vocab, SIDE(bad_ids), slot);
    ops.gather_rows(SIDE(table), SIDE(ids), rows, width, SIDE(gathered));
    ops.scatter_add_rows(SIDE(x), SIDE(ids), rows, width, SIDE(scattered), vocab);
  });
  t.expect("add_row", y, 0);
  t.expect("token_ids into a check slot (first bad, kept)", check, 0);
  // The GPU joins each column's rows in a tree, the host adds them in row order: the host's float
  // rounding over 300 rows, up to ~5e-6 (numpy, 20 draws of this shape).
  t.expect("add_column_sums (300 rows)", sums, 1e-5);
  t.expect("gather_rows (after token_ids)", gathered, 0);
  t.expect("scatter_add_rows (row order)", scattered, kSame);
}

void convolution(Harness& t, const ops::Conv2dGeometry& g, const std::string& name,
                 double tolerance = kSummed) {
  const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w;
  const int64_t ws = g.out_channels * g.in_channels * g.kernel * g.kernel;
  const int64_t ys = g.batch * g.out_channels * g.out_pixels();
  auto x = t.random(xs), w = t.random(ws), bias = t.random(g.out_channels), y = t.filled(ys, -1);
  auto dy = t.random(ys), dx = t.filled(xs, 7), dw = t.random(ws), dbias = t.random(g.out_channels);
  // The same outputs' starting values again, for the backward in halves.
  auto half_dx = t.copy_of(dx.host), half_dw = t.copy_of(dw.host);
  auto half_dbias = t.copy_of(dbias.host);
  t.run([&](const OpsBackend& ops, bool device) {
    auto scratch = t.filled(std::max<int64_t>(ops.conv2d_scratch_floats(g, true), 1), 0);
    Scratch s;
    s.reserved = SIDE(scratch);
    ops.conv2d_forward(g, SIDE(x), SIDE(w), SIDE(bias), SIDE(y), s);
    ops.conv2d_backward(g, SIDE(x), SIDE(w), SIDE(dy), SIDE(dx), SIDE(dw), SIDE(dbias), s);
  });
  t.expect("conv2d_forward " + name, y, tolerance);
  t.expect("conv2d_backward dx " + name, dx, tolerance);
  t.expect("conv2d_backward dw " + name, dw, tolerance);
  t.expect("conv2d_backward dbias " + name, dbias, tolerance);
  // A background's backward in halves (background.split_backward): the input's gradient alone
  // (dw null; dbias passed, untouched), then the weights' and bias's (dx null). Same kernels as
  // the whole pass, so bitwise its outputs on the device.
  t.run_device([&](const OpsBackend& ops) {
    auto scratch = t.filled(std::max<int64_t>(ops.conv2d_scratch_floats(g, true), 1), 0);
    Scratch s;
    s.reserved = scratch.d();
    ops.conv2d_backward(g, x.d(), w.d(), dy.d(), half_dx.d(), nullptr, half_dbias.d(), s);
    ops.conv2d_backward(g, x.d(), w.d(), dy.d(), nullptr, half_dw.d(), half_dbias.d(), s);
  });
  const std::string halves = "conv2d_backward in halves ";
  t.expect_bitwise_same(halves + "dx " + name, dx, half_dx, "as the whole pass");
  t.expect_bitwise_same(halves + "dw " + name, dw, half_dw, "as the whole pass");
  t.expect_bitwise_same(halves + "dbias " + name, dbias, half_dbias, "as the whole pass");
}

void pooling(Harness& t, const ops::Pool2dGeometry& g, const std::string& name) {
  const int64_t xs = g.batch * g.channels * g.in_h * g.in_w;
  const int64_t ys = g.batch * g.channels * g.out_h() * g.out_w();
  auto xv = t.values(xs);
  for (int64_t i = 0; i < xs; i += 7) xv[size_t(i)] = 0.5f;  // ties: the first maximum wins
  auto x = t.copy_of(xv), dy = t.random(ys), maxy = t.filled(ys, -1), avgy = t.filled(ys, -1);
  auto maxdx = t.filled(xs, -1), avgdx = t.filled(xs, -1);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.maxpool2d_forward(g, SIDE(x), SIDE(maxy));
    ops.maxpool2d_backward(g, SIDE(x), SIDE(dy), SIDE(maxdx));
    ops.avgpool2d_forward(g, SIDE(x), SIDE(avgy));
    ops.avgpool2d_backward(g, SIDE(dy), SIDE(avgdx));
  });
  t.expect("maxpool2d_forward " + name, maxy, 0);
  t.expect("maxpool2d_backward " + name, maxdx, kSame);
  t.expect("avgpool2d_forward " + name, avgy, kSame);
  t.expect("avgpool2d_backward " + name, avgdx, kSame);
}

// The fused epilogues (model/fuse_epilogues.hpp) at LeNet's shapes: conv2, pool2 and fc1, the
// forward ones with and without a bias. The backward ones read a ReLU's output made here, the same
// on both sides: a mask or a window's winner decided by the forward's last bit would move a whole
// gradient. `suffix` and the tolerances: the bf16 case's.
void fused_epilogues(Harness& t, const std::string& suffix = "", double conv_tolerance = kSummed,
                     double gemm_tolerance = kSummed) {
  const ops::Conv2dGeometry g{4, 32, 14, 14, 64, 5, 1, 2};
  const ops::Pool2dGeometry pool{4, 64, 14, 14, 2, 2, 0};
  const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w, ys = g.batch * 64 * 196;
  auto relu_output = [&t](int64_t n) {
    std::vector<float> v = t.values(n);
    for (float& e : v) e = std::max(e, 0.0f);
    return t.copy_of(v);
  };
  auto x = t.random(xs), w = t.random(64 * g.col_rows()), bias = t.random(64);
  auto conv_y = t.filled(ys, -1), pool_x = relu_output(ys), pool_dy = t.random(ys / 4);
  auto pool_dx = t.filled(ys, -1);
  const int64_t rows = 64, in = 96, out = 256;
  auto lx = t.random(rows * in), lw = t.random(out * in), lb = t.random(out);
  auto ly = t.filled(rows * out, -1), mask = relu_output(rows * out), ldy = t.random(rows * out);
  auto ldx = t.filled(rows * out, -1), sums = t.random(out);
  auto conv_nb = t.filled(ys, -1), ly_nb = t.filled(rows * out, -1);
  t.run([&](const OpsBackend& ops, bool device) {
    auto scratch = t.filled(std::max<int64_t>(ops.conv2d_scratch_floats(g, true), 1), 0);
    Scratch s;
    s.reserved = SIDE(scratch);
    ops.conv2d_relu_forward(g, SIDE(x), SIDE(w), SIDE(bias), SIDE(conv_y), s);
    ops.conv2d_relu_forward(g, SIDE(x), SIDE(w), nullptr, SIDE(conv_nb), s);
    ops.maxpool2d_relu_backward(pool, SIDE(pool_x), SIDE(pool_dy), SIDE(pool_dx));
    ops.linear_relu_forward(SIDE(lx), SIDE(lw), SIDE(lb), rows, in, out, SIDE(ly));
    ops.linear_relu_forward(SIDE(lx), SIDE(lw), nullptr, rows, in, out, SIDE(ly_nb));
    ops.relu_backward_column_sums(SIDE(mask), SIDE(ldy), rows, out, SIDE(ldx), SIDE(sums));
  });
  t.expect("conv2d_relu_forward (lenet conv2)" + suffix, conv_y, conv_tolerance);
  t.expect("conv2d_relu_forward (no bias)" + suffix, conv_nb, conv_tolerance);
  t.expect("maxpool2d_relu_backward (lenet pool2)" + suffix, pool_dx, kSame);
  t.expect("linear_relu_forward (lenet fc1)" + suffix, ly, gemm_tolerance);
  t.expect("linear_relu_forward (no bias)" + suffix, ly_nb, gemm_tolerance);
  t.expect("relu_backward_column_sums dx" + suffix, ldx, 0);
  t.expect("relu_backward_column_sums sums (64 rows)" + suffix, sums, 1e-5);
}

void normalisation(Harness& t) {
  const ops::BatchNormShape s{16, 6, 50};
  const int64_t n = s.n * s.c * s.hw;
  auto x = t.random(n, -2, 3), dy = t.random(n), gamma = t.random(s.c), beta = t.random(s.c);
  auto rmean = t.random(s.c), rvar = t.random(s.c, 0.5f, 2.0f), mean = t.filled(s.c, 0);
  auto invstd = t.filled(s.c, 0), y = t.filled(n, -1), ye = t.filled(n, -1);
  auto emean = t.filled(s.c, 0), einvstd = t.filled(s.c, 0), dx = t.filled(n, -1);
  auto dgamma = t.random(s.c), dbeta = t.random(s.c);
  const int64_t rows = 65, dim = 48;
  auto lx = t.random(rows * dim, -2, 2), lw = t.random(dim), lb = t.random(dim);
  auto ldy = t.random(rows * dim), ly = t.filled(rows * dim, -1), stats = t.filled(2 * rows, 0);
  auto ldw = t.random(dim), ldb = t.random(dim), ldx = t.filled(rows * dim, -1);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.batchnorm_forward_train(SIDE(x), s, SIDE(gamma), SIDE(beta), 1e-5f, 0.1f, SIDE(rmean),
                                SIDE(rvar), SIDE(mean), SIDE(invstd), SIDE(y));
    ops.batchnorm_forward_eval(SIDE(x), s, SIDE(gamma), SIDE(beta), SIDE(rmean), SIDE(rvar), 1e-5f,
                               SIDE(emean), SIDE(einvstd), SIDE(ye));
    ops.batchnorm_backward(SIDE(x), SIDE(dy), s, SIDE(gamma), SIDE(mean), SIDE(invstd), true,
                           SIDE(dx), SIDE(dgamma), SIDE(dbeta));
    ops.layer_norm_forward(SIDE(lx), SIDE(lw), SIDE(lb), rows, dim, 1e-5, SIDE(ly), SIDE(stats));
    ops.layer_norm_backward(SIDE(lx), SIDE(ldy), SIDE(lw), SIDE(stats), rows, dim, SIDE(ldw),
                            SIDE(ldb), SIDE(ldx));
  });
  t.expect("batchnorm_forward_train y", y, kSame);
  t.expect("batchnorm_forward_train running_var", rvar, kSame);
  t.expect("batchnorm_forward_eval y", ye, kSame);
  t.expect("batchnorm_backward dx", dx, 1e-5);
  t.expect("batchnorm_backward dgamma", dgamma, 1e-5);
  t.expect("batchnorm_backward dbeta", dbeta, 1e-5);
  t.expect("layer_norm_forward y", ly, kSame);
  t.expect("layer_norm_forward stats", stats, kSame);
  t.expect("layer_norm_backward dw", ldw, 1e-5);
  t.expect("layer_norm_backward db", ldb, 1e-5);
  t.expect("layer_norm_backward dx", ldx, 1e-5);
}

void attention_and_loss(Harness& t) {
  const int64_t T = 33;
  const int64_t mats = 3;  // stacked, as attention's heads x samples
  auto p = t.random(mats * T * T, -3, 3), pb = t.random(mats * T * T), g = t.random(mats * T * T);
  const int64_t n = 300, k = 17;
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (auto& l : labels) l = int32_t(t.rng().below(k));
  auto logits = t.random(n * k, -5, 5), grad = t.filled(n * k, -1), loss = t.filled(1, -1);
  // The totals are doubles: held here as pairs of floats, compared as doubles below.
  auto totals = t.copy_of(std::vector<double>{1.5, 2.0});
  auto gradient = t.random(5000), counts = t.filled(2 * ops::kCountFloats, -1);
  auto bad = t.values(5000);
  bad[17] = NAN;
  bad[4000] = INFINITY;
  auto bad_gradient = t.copy_of(bad);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.causal_softmax(SIDE(p), T, mats);
    ops.copy(SIDE(p), SIDE(pb), mats * T * T);
    ops.causal_softmax_backward(SIDE(pb), SIDE(g), T, mats);
    ops::XentOutputs out;
    out.per_row = 0.5;
    out.loss_scale = 2.0f;
    out.loss = SIDE(loss);
    out.totals = SIDE(totals);
    ops.softmax_xent_forward(SIDE(logits), labels.data(), n, k, SIDE(grad), out);
    ops.count_nonfinite_into(SIDE(gradient), 5000, SIDE(counts));
    ops.count_nonfinite_into(SIDE(bad_gradient), 5000, SIDE(counts) + ops::kCountFloats);
  });
  t.expect("causal_softmax (3 matrices)", p, kSame);
  t.expect("causal_softmax_backward (3 matrices)", g, kSame);
  t.expect("softmax_xent_forward gradient", grad, kSame);
  t.expect("softmax_xent_forward loss", loss, kSame);
  // Doubles summing rows whose losses differ by an ulp of expf (GPU against glibc): up to ~1e-7
  // relative, as the large case below (1.16e-9 and 9.12e-10 measured on two input draws).
  t.expect("softmax_xent_forward totals", totals, 1e-7);
  t.expect("count_nonfinite_into (0 and 2)", counts, 0);
}

// The GPU's multi-block sums (ops/cuda/cuda_reduce.cuh) at the shipped models' sizes: many blocks
// a channel, several row chunks a column, thousands of blocks in a flat count. Tolerances: where
// the host sums in a different order from the GPU's tree, the difference is the host's float
// rounding: batch norm's statistics differ in their last bits (y within kSame); the host adds each
// column's 4096 rows one float at a time, so dw, db and the column sums carry an absolute error
// near sqrt(4096) roundings of partial sums ~40 (~2e-6 each: ~1e-4), against 1e-3; the loss's
// rows differ by an ulp of expf between the GPU and glibc (~1e-7 relative per row).
struct LargeCase {
  ops::BatchNormShape bn{128, 32, 28 * 28};  // resnet's first batch norm at batch 128
  int64_t rows = 32 * 128, dim = 256;        // a layer norm over 32 sequences of 128 tokens
  int64_t values = 3'000'017;                // a non-finite count over every gradient
  int64_t tokens = 32 * 64, vocab = 73;      // transformer_small's loss at batch 32
};

// What one run of the large case writes (a fresh set per run: accumulating outputs start equal).
struct LargeOutputs {
  Both<float> rmean, rvar, mean, invstd, y, dx, dgamma, dbeta, ldw, ldb, ldx, sums, counts, grad,
      loss;
  Both<double> totals;
  LargeOutputs(Harness& t, const LargeCase& c) {
    const int64_t n = c.bn.n * c.bn.c * c.bn.hw;
    rmean = t.filled(c.bn.c, 0.25f), rvar = t.filled(c.bn.c, 1.5f);
    mean = t.filled(c.bn.c, 0), invstd = t.filled(c.bn.c, 0), y = t.filled(n, -1);
    dx = t.filled(n, -1), dgamma = t.filled(c.bn.c, 0.5f), dbeta = t.filled(c.bn.c, -0.5f);
    ldw = t.filled(c.dim, 0.5f), ldb = t.filled(c.dim, -0.5f), ldx = t.filled(c.rows * c.dim, -1);
    sums = t.filled(c.dim, 0.125f), counts = t.filled(ops::kCountFloats, -1);
    grad = t.filled(c.tokens * c.vocab, -1), loss = t.filled(1, -1);
    totals = t.copy_of(std::vector<double>{1.5, 2.0});
  }
};

void large_reductions(Harness& t) {
  const LargeCase c;
  const auto& s = c.bn;
  const int64_t n = s.n * s.c * s.hw;
  auto x = t.random(n, -2, 3), dy = t.random(n), gamma = t.random(s.c), beta = t.random(s.c);
  auto lx = t.random(c.rows * c.dim, -2, 2), ldy = t.random(c.rows * c.dim), lw = t.random(c.dim);
  auto lb = t.random(c.dim), ly = t.filled(c.rows * c.dim, -1), stats = t.filled(2 * c.rows, 0);
  auto bad = t.values(c.values);
  for (int64_t i : {int64_t(0), int64_t(4095), int64_t(4096), int64_t(1'234'567), c.values - 1})
    bad[size_t(i)] = i % 2 ? NAN : INFINITY;  // the first, both sides of a block edge, the last
  auto gradients = t.copy_of(bad);
  std::vector<int32_t> labels(static_cast<size_t>(c.tokens));
  for (auto& l : labels) l = int32_t(t.rng().below(c.vocab));
  auto logit_values = t.values(c.tokens * c.vocab, -5, 5);
  // Tied maxima in different lanes of the GPU's warp (columns 6 and 41, 3 and 70): the first
  // column is the argmax, so only rows labelled with it are hits (the totals' second entry).
  for (int64_t r = 0; r < 200; ++r) {
    const int64_t first = r < 100 ? 6 : 3, second = r < 100 ? 41 : 70;
    logit_values[size_t(r * c.vocab + first)] = logit_values[size_t(r * c.vocab + second)] = 9.0f;
    labels[size_t(r)] = int32_t(r % 2 ? first : second);
  }
  auto logits = t.copy_of(logit_values);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.layer_norm_forward(SIDE(lx), SIDE(lw), SIDE(lb), c.rows, c.dim, 1e-5, SIDE(ly),
                           SIDE(stats));
  });
  t.expect("layer_norm_forward stats (4096 x 256)", stats, kSame);
  t.upload(stats);  // both sides' backward from the same statistics
  auto run_all = [&](const OpsBackend& ops, bool device, LargeOutputs& o) {
    ops.batchnorm_forward_train(SIDE(x), s, SIDE(gamma), SIDE(beta), 1e-5f, 0.1f, SIDE(o.rmean),
                                SIDE(o.rvar), SIDE(o.mean), SIDE(o.invstd), SIDE(o.y));
    ops.batchnorm_backward(SIDE(x), SIDE(dy), s, SIDE(gamma), SIDE(o.mean), SIDE(o.invstd), true,
                           SIDE(o.dx), SIDE(o.dgamma), SIDE(o.dbeta));
    ops.layer_norm_backward(SIDE(lx), SIDE(ldy), SIDE(lw), SIDE(stats), c.rows, c.dim, SIDE(o.ldw),
                            SIDE(o.ldb), SIDE(o.ldx));
    ops.add_column_sums(SIDE(ldy), c.rows, c.dim, SIDE(o.sums));
    ops.count_nonfinite_into(SIDE(gradients), c.values, SIDE(o.counts));
    ops::XentOutputs out;
    out.per_row = 1.0 / 64;
    out.loss = SIDE(o.loss);
    out.totals = SIDE(o.totals);
    ops.softmax_xent_forward(SIDE(logits), labels.data(), c.tokens, c.vocab, SIDE(o.grad), out);
  };
  LargeOutputs o(t, c);
  t.run([&](const OpsBackend& ops, bool device) { run_all(ops, device, o); });
  t.expect("batchnorm_forward_train y (128x32x28x28)", o.y, kSame);
  t.expect("batchnorm_forward_train mean (128x32x28x28)", o.mean, kSame);
  t.expect("batchnorm_forward_train running_var (large)", o.rvar, kSame);
  t.expect("batchnorm_backward dx (128x32x28x28)", o.dx, 1e-5);
  // A channel's dgamma and dbeta sum 100,352 values: the host adds each 784-pixel row in float
  // (~2.5e-5 absolute a row, rows of partial sums near 15) and 128 rows in double, ~3e-4 absolute
  // in all, against channel totals of a few to a few hundred: up to ~1e-4 relative (measured on
  // an H200: 3.17e-5 for dbeta).
  t.expect("batchnorm_backward dgamma (128x32x28x28)", o.dgamma, 2e-4);
  t.expect("batchnorm_backward dbeta (128x32x28x28)", o.dbeta, 2e-4);
  t.expect("layer_norm_backward dw (4096 x 256)", o.ldw, 1e-3);
  t.expect("layer_norm_backward db (4096 x 256)", o.ldb, 1e-3);
  t.expect("layer_norm_backward dx (4096 x 256)", o.ldx, 1e-5);
  t.expect("add_column_sums (4096 x 256)", o.sums, 1e-3);
  t.expect("count_nonfinite_into (3M, 5 in 4 blocks)", o.counts, 0);
  t.expect("softmax_xent_forward gradient (2048 x 73)", o.grad, kSame);
  t.expect("softmax_xent_forward loss (2048 x 73)", o.loss, kSame);
  t.expect("softmax_xent_forward totals (2048 x 73)", o.totals, 1e-7);
  LargeOutputs again(t, c), twice(t, c);
  t.run_device([&](const OpsBackend& ops) { run_all(ops, true, again); });
  t.run_device([&](const OpsBackend& ops) { run_all(ops, true, twice); });
  t.expect_bitwise_same("batchnorm_forward_train y, statistics", again.y, twice.y);
  t.expect_bitwise_same("batchnorm_forward_train running_var", again.rvar, twice.rvar);
  t.expect_bitwise_same("batchnorm_backward dx", again.dx, twice.dx);
  t.expect_bitwise_same("batchnorm_backward dgamma", again.dgamma, twice.dgamma);
  t.expect_bitwise_same("layer_norm_backward dw", again.ldw, twice.ldw);
  t.expect_bitwise_same("layer_norm_backward db", again.ldb, twice.ldb);
  t.expect_bitwise_same("add_column_sums", again.sums, twice.sums);
  t.expect_bitwise_same("count_nonfinite_into", again.counts, twice.counts);
  t.expect_bitwise_same("softmax_xent_forward totals", again.totals, twice.totals);
}

void optimizers_and_codec(Harness& t) {
  const int64_t n = 20011;
  auto w = t.random(n), g = t.random(n), b = t.random(n), w2 = t.random(n), m = t.random(n);
  auto v = t.random(n, 0, 1), skipped = t.random(n), before = skipped;
  auto skip = t.copy_of(std::vector<float>{0, 0});
  ops::store_count(skip.h(), 1.0);
  t.upload(skip);
  ops::SgdUpdate sgd{0.1f, 0.01f, 0.9f, false, true};
  // A graphed step's SGD: lr and the first-step rule from the per-step record, not the fields.
  auto record = t.copy_of(std::vector<float>{0.1f, 1.0f}), w3 = t.random(n), b3 = t.random(n);
  ops::SgdUpdate recorded{0.5f, 0.01f, 0.9f, false, false};
  ops::AdamWUpdate adam{0.999f, 0.9f, 0.1f, 0.99f, 0.01f, 0.001f, 0.5f, 1e-8f};
  WeightCodec codec;
  codec.kind = "scalednn";
  auto weights = t.random(n, -3, 3);
  weights.host[10] = 1e-9f;  // out of the format's range: raw mode's side list
  t.upload(weights);
  const int64_t words = encoded_words(codec, n);
  auto encoded = t.copy_of(std::vector<uint32_t>(size_t(words), 0));
  auto side = t.filled(n + 2, 0), decoded = t.filled(n, -1);
  t.run([&](const OpsBackend& ops, bool device) {
    ops.sgd_update(sgd, n, SIDE(w), SIDE(g), SIDE(b), nullptr);
    ops.adamw_update(adam, n, SIDE(w2), SIDE(g), SIDE(m), SIDE(v), nullptr);
    ops.sgd_update(sgd, n, SIDE(skipped), SIDE(g), SIDE(b), SIDE(skip));  // skipped: unchanged
    recorded.per_step = SIDE(record);
    ops.sgd_update(recorded, n, SIDE(w3), SIDE(g), SIDE(b3), nullptr);
    ops.encode_weights(codec, SIDE(weights), n, SIDE(encoded), SIDE(side));
    ops.decode_weights(codec, SIDE(encoded), n, SIDE(side), SIDE(decoded));
  });
  t.expect("sgd_update (nesterov) w", w, kSame);
  t.expect("sgd_update (nesterov) momentum", b, kSame);
  t.expect("sgd_update (per-step record: lr, first) w", w3, kSame);
  t.expect("sgd_update (per-step record: lr, first) momentum", b3, kSame);
  t.expect("adamw_update w", w2, kSame);
  t.expect("adamw_update m", m, kSame);
  t.expect("adamw_update v", v, kSame);
  t.expect("sgd_update skipped on a nonzero count", skipped, 0);
  if (skipped.host != before.host) t.fail("sgd_update skipped: the reference changed w");
  t.expect("encode_weights + decode_weights (scalednn, raw)", decoded, 0);
}

}  // namespace

// bf16 tolerances. GEMM: both sides round the inputs to nearest even (ops/portable/bf16.hpp) and
// accumulate and write FP32, so only the order of the sums differs, as in FP32: kSummed (a side
// that skipped the rounding is off by ~1e-2 and fails). Convolution: cuDNN's legacy API has no
// bf16-in, FP32-out configuration, so the GPU's outputs are rounded to bf16 once before they are
// widened (ops/cuda/cuda_conv.cu): up to 2^-8 of the value; twice that is allowed.
constexpr double kBf16Gemm = kSummed, kBf16Conv = 2.0 / 256;

std::vector<Outcome> compare_bf16_products(const OpsBackend& reference, const OpsBackend& device,
                                           Memory& memory, uint64_t seed, FILE* log) {
  Harness t(reference, device, memory, seed, log);
  matrices(t, kBf16Gemm);
  convolution(t, ops::Conv2dGeometry{4, 3, 12, 12, 8, 3, 1, 1}, "bf16 (3x3/1, padded)", kBf16Conv);
  convolution(t, ops::Conv2dGeometry{8, 6, 14, 14, 16, 5, 2, 0}, "bf16 (5x5/2)", kBf16Conv);
  convolution(t, ops::Conv2dGeometry{4, 32, 14, 14, 64, 5, 1, 2}, "bf16 (lenet conv2)", kBf16Conv);
  fused_epilogues(t, " bf16", kBf16Conv, kBf16Gemm);
  return t.outcomes();
}

std::vector<Outcome> compare_backends(const OpsBackend& reference, const OpsBackend& device,
                                      Memory& memory, uint64_t seed, FILE* log) {
  Harness t(reference, device, memory, seed, log);
  elementwise(t);
  matrices(t);
  rows_and_embeddings(t);
  ops::Conv2dGeometry conv{4, 3, 12, 12, 8, 3, 1, 1};
  convolution(t, conv, "(3x3/1, padded)");
  conv = ops::Conv2dGeometry{8, 6, 14, 14, 16, 5, 2, 0};
  convolution(t, conv, "(5x5/2)");
  ops::Pool2dGeometry pool{4, 3, 13, 11, 2, 2, 0};
  pooling(t, pool, "(2x2/2, odd sizes)");
  pool = ops::Pool2dGeometry{2, 5, 9, 10, 3, 2, 1};
  pooling(t, pool, "(3x3/2, padded)");
  fused_epilogues(t);
  normalisation(t);
  attention_and_loss(t);
  optimizers_and_codec(t);
  large_reductions(t);
  return t.outcomes();
}

}  // namespace wt::parity
