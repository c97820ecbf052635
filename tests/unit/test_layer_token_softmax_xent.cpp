// token_softmax_xent: finite-difference gradients, and agreement with softmax_xent applied to
// every token row (the per-sample loss is the mean over tokens).
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerTokenSoftmaxXent, Gradients) {
  GradCheckOptions opt;
  opt.labels = {0, 4, 2, 1, 3, 3};  // 2 samples x 3 tokens
  opt.input_scale = 2.0f;
  check_layer_gradients("type = \"token_softmax_xent\"", {{3, 5}}, 2, opt);
}

TEST(LayerTokenSoftmaxXent, MeanOfPerTokenSoftmaxXent) {
  const int64_t n = 2, T = 4, V = 6;
  StandaloneLayer tok = make_layer("type = \"token_softmax_xent\"", {{T, V}});
  StandaloneLayer row = make_layer("type = \"softmax_xent\"", {{V}});
  EXPECT_EQ(tok.layer->labels_per_sample(), T);
  EXPECT_EQ(row.layer->labels_per_sample(), 1);
  Rng rng(4);
  Tensor logits = random_tensor({n, T, V}, rng, 3.0f);
  std::vector<int32_t> labels;
  for (int64_t i = 0; i < n * T; ++i) labels.push_back(int32_t(rng.below(V)));
  LayerContext ctx = wt::testing::layer_context();
  ctx.labels = labels.data();
  ctx.loss_scale = 0.5f;

  Tensor out_tok, out_row, grad_tok, grad_row;
  Saved saved_tok, saved_row;
  double tok_totals[2] = {0.0, 0.0}, row_totals[2] = {0.0, 0.0};
  ctx.totals = tok_totals;
  tok.layer->forward({&logits}, out_tok, saved_tok, ctx);
  Tensor rows = logits.reshaped({n * T, V});
  ctx.totals = row_totals;
  row.layer->forward({&rows}, out_row, saved_row, ctx);
  // Same total over tokens, divided by T: the mean per-token loss per sample.
  EXPECT_NEAR(tok_totals[0], row_totals[0] / T, 1e-9);
  EXPECT_NEAR(tok_totals[1], row_totals[1] / T, 1e-12);
  EXPECT_NEAR(out_tok.data()[0], out_row.data()[0] / T, 1e-5);

  Tensor seed = Tensor::empty({1}, wt::testing::memory());
  seed.fill(1.0f);
  tok.layer->backward({&logits}, out_tok, seed, {&grad_tok}, saved_tok, ctx);
  row.layer->backward({&rows}, out_row, seed, {&grad_row}, saved_row, ctx);
  ASSERT_EQ(grad_tok.shape(), logits.shape());
  for (int64_t i = 0; i < grad_tok.numel(); ++i)
    EXPECT_NEAR(grad_tok.data()[i], grad_row.data()[i] / T, 1e-7) << i;
}

TEST(LayerTokenSoftmaxXent, RejectsFlatLogits) {
  EXPECT_THROW(make_layer("type = \"token_softmax_xent\"", {{5}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing
