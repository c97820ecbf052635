#include <gtest/gtest.h>

#include "gradcheck.hpp"
#include "test_memory.hpp"

namespace wt::testing {
namespace {

TEST(LayerGelu, ForwardMatchesErfForm) {
  StandaloneLayer s = make_layer("type = \"gelu\"", {{5}});
  Tensor x = Tensor::empty({1, 5}, wt::testing::memory());
  const float xs[] = {-3.0f, -1.0f, 0.0f, 1.0f, 2.0f};
  std::copy(xs, xs + 5, x.data());
  Tensor out;
  Saved saved;
  s.layer->forward({&x}, out, saved, wt::testing::layer_context());
  // torch.nn.GELU()(torch.tensor([-3., -1., 0., 1., 2.]))
  const float want[] = {-0.0040496886f, -0.15865526f, 0.0f, 0.84134474f, 1.9544997f};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(out.data()[i], want[i], 1e-6) << i;
}

TEST(LayerGelu, GradCheck) {
  GradCheckOptions opt;
  opt.eps = 1e-3;
  opt.input_scale = 3.0f;  // cover the curved region and both tails
  check_layer_gradients("type = \"gelu\"", {{2, 4, 4}}, 3, opt);
}

}  // namespace
}  // namespace wt::testing
