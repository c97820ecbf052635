// embedding and position_embedding: finite-difference gradients, row lookup by hand, and the
// checks on ids and shapes.
#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt::testing {
namespace {

TEST(LayerEmbedding, WeightGradients) {
  GradCheckOptions opt;
  opt.integer_inputs = 5;
  check_layer_gradients("type = \"embedding\"\nvocab = 5\ndim = 3", {{6}}, 2, opt);
}

TEST(LayerEmbedding, ForwardCopiesRowsAndBackwardAddsIntoThem) {
  StandaloneLayer s = make_layer("type = \"embedding\"\nvocab = 4\ndim = 2", {{3}});
  ASSERT_EQ(s.out_shape, (Shape{3, 2}));
  float* w = s.params[0].value.data();
  for (int i = 0; i < 8; ++i) w[i] = float(10 * (i / 2) + i % 2);  // row r = (10r, 10r+1)
  Tensor ids = Tensor::empty({1, 3}, wt::testing::memory());
  const float idv[3] = {2, 0, 2};
  std::copy(idv, idv + 3, ids.data());
  Tensor out;
  Saved saved;
  s.layer->forward({&ids}, out, saved, wt::testing::layer_context());
  ASSERT_EQ(out.shape(), (Shape{1, 3, 2}));
  const float want[6] = {20, 21, 0, 1, 20, 21};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out.data()[i], want[i]) << i;

  Tensor dout = Tensor::empty({1, 3, 2}, wt::testing::memory());
  const float dv[6] = {1, 2, 3, 4, 5, 6};
  std::copy(dv, dv + 6, dout.data());
  s.params[0].grad.fill(0.0f);
  Tensor dx;
  s.layer->backward({&ids}, out, dout, {&dx}, saved, wt::testing::layer_context());
  const float* g = s.params[0].grad.data();
  EXPECT_EQ(g[0], 3);  // id 0 at position 1
  EXPECT_EQ(g[1], 4);
  EXPECT_EQ(g[2], 0);      // id 1 never used
  EXPECT_EQ(g[4], 1 + 5);  // id 2 at positions 0 and 2
  EXPECT_EQ(g[5], 2 + 6);
  ASSERT_EQ(dx.shape(), ids.shape());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(dx.data()[i], 0.0f);  // ids have no gradient
}

TEST(LayerEmbedding, RejectsIdsOutsideTheVocabulary) {
  StandaloneLayer s = make_layer("type = \"embedding\"\nvocab = 4\ndim = 2", {{2}});
  Tensor out;
  Saved saved;
  for (float bad : {4.0f, -1.0f, 1.5f}) {
    Tensor ids = Tensor::zeros({1, 2}, wt::testing::memory());
    ids.data()[1] = bad;
    EXPECT_THROW(s.layer->forward({&ids}, out, saved, wt::testing::layer_context()),
                 std::out_of_range)
        << bad;
  }
}

TEST(LayerEmbedding, RejectsBadShapesAndKeys) {
  EXPECT_THROW(make_layer("type = \"embedding\"\nvocab = 4\ndim = 2", {{2, 3}}),
               std::invalid_argument);
  EXPECT_THROW(make_layer("type = \"embedding\"\nvocab = 4", {{2}}), InputError);
  EXPECT_THROW(make_layer("type = \"embedding\"\nvocab = 0\ndim = 2", {{2}}), InputError);
  EXPECT_THROW(make_layer("type = \"embedding\"\nvocab = 4\ndim = 2\ndims = 3", {{2}}), InputError);
}

TEST(LayerPositionEmbedding, Gradients) {
  check_layer_gradients("type = \"position_embedding\"", {{4, 3}}, 3);
}

TEST(LayerPositionEmbedding, AddsOneVectorPerPosition) {
  StandaloneLayer s = make_layer("type = \"position_embedding\"", {{2, 2}});
  ASSERT_EQ(s.params[0].value.shape(), (Shape{2, 2}));
  const float p[4] = {1, 2, 3, 4};
  std::copy(p, p + 4, s.params[0].value.data());
  Tensor x = Tensor::zeros({2, 2, 2}, wt::testing::memory());
  x.data()[5] = 10;  // sample 1, position 0, feature 1
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  const float want[8] = {1, 2, 3, 4, 1, 12, 3, 4};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out.data()[i], want[i]) << i;
  EXPECT_THROW(make_layer("type = \"position_embedding\"", {{4}}), std::invalid_argument);
}

}  // namespace
}  // namespace wt::testing
