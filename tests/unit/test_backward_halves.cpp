// A convolution's backward in halves (model/backward_part.hpp): its input's gradient alone (dw
// null, dbias untouched), then its parameters' alone (dx null), bit for bit the whole pass, in
// FP32 and bf16, on the host (oneDNN's
// primitives where built with it, im2col + GEMM where it declines the geometry) and the strict
// device; and the conv2d layer splits by the context's backward_part, its fused ReLU mask included.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <memory>
#include <string>
#include <vector>

#include "bitwise_tensors.hpp"
#include "device/device_context.hpp"
#include "model/layer_registry.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

struct HalvesCase {
  DeviceKind kind;
  Precision precision;
};

// The device of `c`, in FP32 where this CPU cannot run the case's bf16 (the test then skips).
DeviceOptions device_options(const HalvesCase& c) {
  DeviceOptions o;
  o.kind = c.kind;
  o.strict_seed = 11;
  if (precision_unsupported(c.kind, c.precision).empty()) o.precision = c.precision;
  return o;
}

class BackwardHalves : public ::testing::TestWithParam<HalvesCase> {
 protected:
  BackwardHalves() : device_(device_options(GetParam())) {}
  void SetUp() override {
    const std::string why = precision_unsupported(GetParam().kind, GetParam().precision);
    if (!why.empty()) GTEST_SKIP() << why;
  }

  const OpsBackend& ops() { return device_.ops(); }
  Tensor random(int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = rng_.uniform(-1.0f, 1.0f);
    Tensor t = Tensor::empty({n}, device_.allocator());
    t.copy_from_host(v.data());
    return t;
  }
  Tensor filled(int64_t n, float value) {
    return testing::filled_tensor(device_.allocator(), n, value);
  }

  DeviceContext device_;
  Rng rng_{2026};
};

TEST_P(BackwardHalves, Conv2dOpsHalvesAreTheWholePass) {
  // LeNet's conv2 (oneDNN's primitives where built with it), and a stride that drops the last
  // input row, which oneDNN declines (im2col + GEMM).
  for (const ops::Conv2dGeometry& g : {ops::Conv2dGeometry{4, 32, 14, 14, 64, 5, 1, 2},
                                       ops::Conv2dGeometry{2, 3, 8, 8, 4, 3, 2, 0}}) {
    const int64_t xs = g.batch * g.in_channels * g.in_h * g.in_w,
                  ws = g.out_channels * g.col_rows();
    const Tensor x = random(xs), w = random(ws),
                 dy = random(g.batch * g.out_channels * g.out_pixels());
    // Parameter gradients accumulate: start both from the same non-zero values.
    Tensor dx = filled(xs, 0), dw = filled(ws, 0.5f), db = filled(g.out_channels, 0.25f);
    ops().conv2d_backward(g, x.device_ptr(), w.device_ptr(), dy.device_ptr(), dx.device_ptr(),
                          dw.device_ptr(), db.device_ptr(), Scratch{&device_.allocator(), 0});
    Tensor hdx = filled(xs, 0), hdw = filled(ws, 0.5f), hdb = filled(g.out_channels, 0.25f);
    // The input's half: dw null, dbias passed (it picks the whole pass's kernels) but untouched.
    ops().conv2d_backward(g, x.device_ptr(), w.device_ptr(), dy.device_ptr(), hdx.device_ptr(),
                          nullptr, hdb.device_ptr(), Scratch{&device_.allocator(), 0});
    testing::expect_bitwise_equal(hdw, filled(ws, 0.5f), "dw after the input's half (untouched)");
    testing::expect_bitwise_equal(hdb, filled(g.out_channels, 0.25f),
                                  "dbias after the input's half");
    ops().conv2d_backward(g, x.device_ptr(), w.device_ptr(), dy.device_ptr(), nullptr,
                          hdw.device_ptr(), hdb.device_ptr(), Scratch{&device_.allocator(), 0});
    testing::expect_bitwise_equal(hdx, dx, "dx");
    testing::expect_bitwise_equal(hdw, dw, "dw");
    testing::expect_bitwise_equal(hdb, db, "dbias");
  }
}

TEST_P(BackwardHalves, Conv2dLayerSplitsByTheContextsPart) {
  const toml::table table =
      toml::parse("type = \"conv2d\"\nout_channels = 6\nkernel = 3\npadding = 1");
  std::unique_ptr<Layer> layer =
      LayerRegistry::create("conv2d", LayerArgs(table, "<test>", "conv"));
  ASSERT_TRUE(layer->splits_backward());
  layer->infer({{4, 7, 7}});
  layer->fuse_relu_epilogue(true);  // backward masks the output gradient with the ReLU's
  const auto specs = layer->param_specs();
  std::vector<Param> whole(specs.size()), halves(specs.size());
  std::vector<Param*> whole_ptrs, halves_ptrs;
  for (size_t i = 0; i < specs.size(); ++i) {
    const int64_t n = shape_numel(specs[i].shape);
    whole[i].value = random(n);
    halves[i].value = whole[i].value;
    whole[i].grad = filled(n, 0.5f);
    halves[i].grad = filled(n, 0.5f);
    whole_ptrs.push_back(&whole[i]);
    halves_ptrs.push_back(&halves[i]);
  }
  LayerContext ctx;
  ctx.allocator = &device_.allocator();
  ctx.ops = &ops();
  const Tensor x = random(2 * 4 * 7 * 7).reshaped({2, 4, 7, 7});
  Tensor out = Tensor::empty({2, 6, 7, 7}, device_.allocator());
  Saved saved;
  layer->bind(whole_ptrs, {});
  layer->forward({&x}, out, saved, ctx);
  const Tensor dout = random(out.numel()).reshaped(out.shape());
  Tensor dx_whole, dx_halves;
  layer->backward({&x}, out, dout, {&dx_whole}, saved, ctx);
  layer->bind(halves_ptrs, {});
  ctx.backward_part = BackwardPart::InputGradient;
  layer->backward({&x}, out, dout, {&dx_halves}, saved, ctx);
  for (size_t i = 0; i < specs.size(); ++i)
    testing::expect_bitwise_equal(halves[i].grad, filled(shape_numel(specs[i].shape), 0.5f),
                                  "a parameter gradient after the input's half (untouched)");
  ctx.backward_part = BackwardPart::ParamGradient;
  layer->backward({&x}, out, dout, {nullptr}, saved, ctx);
  testing::expect_bitwise_equal(dx_halves, dx_whole, "dx");
  for (size_t i = 0; i < specs.size(); ++i)
    testing::expect_bitwise_equal(halves[i].grad, whole[i].grad, specs[i].name.c_str());
}

INSTANTIATE_TEST_SUITE_P(Devices, BackwardHalves,
                         ::testing::Values(HalvesCase{DeviceKind::Host, Precision::Fp32},
                                           HalvesCase{DeviceKind::Strict, Precision::Fp32},
                                           HalvesCase{DeviceKind::Host, Precision::Bf16},
                                           HalvesCase{DeviceKind::Strict, Precision::Bf16}),
                         [](const ::testing::TestParamInfo<HalvesCase>& info) {
                           return std::string(info.param.kind == DeviceKind::Host ? "Host"
                                                                                  : "Strict") +
                                  (info.param.precision == Precision::Bf16 ? "Bf16" : "Fp32");
                         });

}  // namespace
}  // namespace wt
