#pragma once
// Finite-difference gradient check for one layer, shared by every layer's test.
// check_layer_gradients("type = \"conv2d\"\nout_channels = 3\nkernel = 3", {{2, 5, 5}}, batch)
// builds the layer from TOML, feeds random inputs, takes L = sum(out * R) for a fixed random R,
// and compares backward()'s input and parameter gradients with central differences.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "model/layer_registry.hpp"
#include "test_memory.hpp"

namespace wt::testing {

struct StandaloneLayer {
  std::unique_ptr<Layer> layer;
  std::vector<Param> params;
  std::vector<Buffer> buffers;
  Shape out_shape;
};

inline StandaloneLayer make_layer(const std::string& toml_text, const std::vector<Shape>& in_shapes,
                                  uint64_t seed = 7) {
  static std::vector<toml::table> keep_alive;  // LayerArgs refers to the table during creation
  toml::table t = toml::parse(toml_text);
  if (!t.contains("name")) t.insert("name", "test_layer");
  StandaloneLayer s;
  auto type = t["type"].value<std::string>().value();
  LayerArgs args(t, "<test>", "test_layer");
  s.layer = LayerRegistry::create(type, args);
  s.layer->set_name("test_layer");
  s.out_shape = s.layer->infer(in_shapes);
  auto pspecs = s.layer->param_specs();
  auto bspecs = s.layer->buffer_specs();
  s.params.reserve(pspecs.size());
  s.buffers.reserve(bspecs.size());
  std::vector<Param*> ps;
  std::vector<Buffer*> bs;
  for (const auto& p : pspecs) {
    s.params.push_back({p.name, Tensor::zeros(p.shape, wt::testing::memory()),
                        Tensor::zeros(p.shape, wt::testing::memory())});
    ps.push_back(&s.params.back());
  }
  for (const auto& b : bspecs) {
    s.buffers.push_back({b.name, Tensor::zeros(b.shape, wt::testing::memory())});
    bs.push_back(&s.buffers.back());
  }
  s.layer->bind(ps, bs);
  Rng rng(seed);
  s.layer->init(rng);
  return s;
}

inline Tensor random_tensor(const Shape& shape, Rng& rng, float scale = 1.0f) {
  Tensor t = Tensor::empty(shape, wt::testing::memory());
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = scale * rng.uniform(-1.0f, 1.0f);
  return t;
}

inline Shape with_batch(int64_t n, const Shape& s) {
  Shape b{n};
  b.insert(b.end(), s.begin(), s.end());
  return b;
}

// Options: which inputs to check, tolerance, and a mode (Train/Eval).
struct GradCheckOptions {
  double eps = 1e-2;
  double tolerance = 2e-2;  // max |analytic - numeric| / max(1, |numeric|) over checked entries
  int max_entries = 64;     // entries checked per tensor (spread over the tensor)
  Mode mode = Mode::Train;
  std::vector<int32_t> labels;  // for loss layers
  float input_scale = 1.0f;
  // > 0: inputs are integer token ids in [0, integer_inputs), which have no gradient to check.
  int64_t integer_inputs = 0;
};

inline void check_layer_gradients(const std::string& toml_text,
                                  const std::vector<Shape>& sample_shapes, int64_t batch,
                                  GradCheckOptions opt = {}) {
  StandaloneLayer s = make_layer(toml_text, sample_shapes);
  Rng rng(123);
  std::vector<Tensor> inputs;
  for (const auto& shp : sample_shapes) {
    inputs.push_back(random_tensor(with_batch(batch, shp), rng, opt.input_scale));
    if (opt.integer_inputs > 0)
      for (int64_t i = 0; i < inputs.back().numel(); ++i)
        inputs.back().data()[i] = float(rng.below(uint64_t(opt.integer_inputs)));
  }
  std::vector<const Tensor*> in_ptrs;
  for (auto& t : inputs) in_ptrs.push_back(&t);

  LayerContext ctx = wt::testing::layer_context();
  ctx.mode = opt.mode;
  ctx.labels = opt.labels.empty() ? nullptr : opt.labels.data();
  ctx.loss_scale = 1.0f / static_cast<float>(batch);

  // Loss = sum(out * R); R fixed. Dropout-like layers must reuse their mask: we reseed ctx.rng.
  auto run_forward = [&](Saved& saved) {
    Rng layer_rng(99);
    ctx.rng = &layer_rng;
    Tensor out;
    s.layer->forward(in_ptrs, out, saved, ctx);
    return out;
  };
  Saved saved0;
  Tensor out0 = run_forward(saved0);
  Rng rr(5);
  Tensor R = random_tensor(out0.shape(), rr);
  auto loss_of = [&]() {
    Saved sv;
    Tensor o = run_forward(sv);
    double l = 0;
    for (int64_t i = 0; i < o.numel(); ++i) l += double(o.data()[i]) * R.data()[i];
    return l;
  };

  for (auto& p : s.params) p.grad.fill(0.0f);
  std::vector<Tensor> din(inputs.size());
  std::vector<Tensor*> din_ptrs;
  for (auto& d : din) din_ptrs.push_back(&d);
  {
    Rng layer_rng(99);
    ctx.rng = &layer_rng;
    s.layer->backward(in_ptrs, out0, R, din_ptrs, saved0, ctx);
  }

  auto check_tensor = [&](Tensor& x, const Tensor& analytic, const std::string& what) {
    ASSERT_EQ(x.numel(), analytic.numel()) << what;
    const int64_t n = x.numel();
    const int64_t step = std::max<int64_t>(1, n / opt.max_entries);
    double worst = 0;
    for (int64_t i = 0; i < n; i += step) {
      float orig = x.data()[i];
      x.data()[i] = orig + float(opt.eps);
      double lp = loss_of();
      x.data()[i] = orig - float(opt.eps);
      double lm = loss_of();
      x.data()[i] = orig;
      double numeric = (lp - lm) / (2 * opt.eps);
      double err = std::abs(numeric - analytic.data()[i]) / std::max(1.0, std::abs(numeric));
      worst = std::max(worst, err);
      EXPECT_LE(err, opt.tolerance)
          << what << "[" << i << "]: analytic " << analytic.data()[i] << " numeric " << numeric;
    }
    (void)worst;  // ASSERT_EQ above makes this lambda return void
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    if ((opt.labels.empty() || i == 0) && opt.integer_inputs == 0)
      check_tensor(inputs[i], din[i], "d input " + std::to_string(i));
  for (auto& p : s.params) {
    Tensor g = Tensor::empty(p.grad.shape(), wt::testing::memory());
    g.copy_from(p.grad);
    check_tensor(p.value, g, "d " + p.name);
  }
}

}  // namespace wt::testing
