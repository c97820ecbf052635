// The model files in models/ (which need the conv/linear/pool layers as well, so those tests skip
// until every type they use is registered) and Graph::load's error reporting, checked with small
// model files that use only always-present layer types.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "model/graph.hpp"
#include "model/layer_registry.hpp"
#include "model/model.hpp"
#include "model_runner.hpp"
#include "test_memory.hpp"
#include "util/input_error.hpp"

namespace wt {
namespace {

std::string model_path(const std::string& name) {
  return std::string(WT_SOURCE_DIR) + "/models/" + name + ".toml";
}

// The first layer type among `types` that is not registered, or "" when all are.
std::string missing_type(const std::vector<std::string>& types) {
  for (const auto& t : types)
    if (!LayerRegistry::contains(t)) return t;
  return "";
}

#define SKIP_UNLESS_REGISTERED(...)                                                           \
  do {                                                                                        \
    const std::string missing = missing_type({__VA_ARGS__});                                  \
    if (!missing.empty()) GTEST_SKIP() << "layer type '" << missing << "' is not built here"; \
  } while (0)

const Node& node_named(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return n;
  throw std::out_of_range("no node " + name);
}

int64_t linear_params(int64_t in, int64_t out) { return in * out + out; }
int64_t conv_params(int64_t in, int64_t out, int64_t k, bool bias) {
  return out * in * k * k + (bias ? out : 0);
}

TEST(Models, Mlp) {
  SKIP_UNLESS_REGISTERED("conv2d", "linear", "flatten");
  Graph g = Graph::load(model_path("mlp"));
  EXPECT_EQ(g.name, "mlp");
  EXPECT_EQ(g.input_shape, (Shape{1, 28, 28}));
  EXPECT_EQ(g.classes, 10);
  ASSERT_EQ(g.nodes.size(), 7u);
  EXPECT_EQ(node_named(g, "flatten").out_shape, (Shape{784}));
  EXPECT_EQ(node_named(g, "fc1").out_shape, (Shape{256}));
  EXPECT_EQ(node_named(g, "fc3").out_shape, (Shape{10}));
  EXPECT_EQ(g.nodes.back().out_shape, (Shape{1}));
  Model m(std::move(g), wt::testing::memory());
  EXPECT_EQ(m.param_count(),
            linear_params(784, 256) + linear_params(256, 256) + linear_params(256, 10));
}

TEST(Models, LeNet) {
  SKIP_UNLESS_REGISTERED("conv2d", "linear", "maxpool2d", "flatten");
  Graph g = Graph::load(model_path("lenet"));
  EXPECT_EQ(g.name, "lenet");
  ASSERT_EQ(g.nodes.size(), 11u);
  EXPECT_EQ(node_named(g, "conv1").out_shape, (Shape{32, 28, 28}));
  EXPECT_EQ(node_named(g, "pool1").out_shape, (Shape{32, 14, 14}));
  EXPECT_EQ(node_named(g, "conv2").out_shape, (Shape{64, 14, 14}));
  EXPECT_EQ(node_named(g, "pool2").out_shape, (Shape{64, 7, 7}));
  EXPECT_EQ(node_named(g, "flatten").out_shape, (Shape{3136}));
  EXPECT_EQ(node_named(g, "fc2").out_shape, (Shape{10}));
  Model m(std::move(g), wt::testing::memory());
  const int64_t want = conv_params(1, 32, 5, true) + conv_params(32, 64, 5, true) +
                       linear_params(3136, 256) + linear_params(256, 10);
  EXPECT_EQ(want, 857738);
  EXPECT_EQ(m.param_count(), want);
}

// A backward pass skips the input gradients nothing upstream uses: mlp's flatten of the input
// needs none (so fc1 computes no [N, 784] gradient); every node after a parameter does.
TEST(Models, OutputGradientNeededOnlyDownstreamOfParameters) {
  SKIP_UNLESS_REGISTERED("conv2d", "linear", "maxpool2d", "flatten");
  const Graph mlp = Graph::load(model_path("mlp"));
  EXPECT_EQ(mlp.output_gradient_needed(), (std::vector<char>{0, 1, 1, 1, 1, 1, 1}));
  const Graph lenet = Graph::load(model_path("lenet"));
  EXPECT_EQ(lenet.output_gradient_needed(), std::vector<char>(lenet.nodes.size(), 1));
}

TEST(Models, ResNet) {
  SKIP_UNLESS_REGISTERED("conv2d", "linear", "global_avgpool");
  Graph g = Graph::load(model_path("resnet"));
  EXPECT_EQ(g.name, "resnet");
  ASSERT_EQ(g.nodes.size(), 31u);
  EXPECT_EQ(node_named(g, "stem_relu").out_shape, (Shape{32, 28, 28}));
  EXPECT_EQ(node_named(g, "s1_add").out_shape, (Shape{32, 28, 28}));
  EXPECT_EQ(node_named(g, "s2_add").out_shape, (Shape{64, 14, 14}));
  EXPECT_EQ(node_named(g, "s2_down_bn").out_shape, (Shape{64, 14, 14}));
  EXPECT_EQ(node_named(g, "s3_add").out_shape, (Shape{128, 7, 7}));
  EXPECT_EQ(node_named(g, "pool").out_shape, (Shape{128}));
  EXPECT_EQ(node_named(g, "fc").out_shape, (Shape{10}));
  // Residual adds read the block output and the shortcut.
  EXPECT_EQ(node_named(g, "s1_add").inputs.size(), 2u);
  EXPECT_EQ(node_named(g, "s3_add").inputs.size(), 2u);

  // Forward multiply-adds: 3x3 convs at 28x28, 14x14 and 7x7, plus the 1x1 shortcuts.
  const double macs = 784.0 * 9 * (1 * 32 + 32 * 32 * 2) + 196.0 * 9 * (32 * 64 + 64 * 64) +
                      196.0 * 32 * 64 + 49.0 * 9 * (64 * 128 + 128 * 128) + 49.0 * 64 * 128;
  EXPECT_LT(2 * macs, 100e6) << "keep the forward pass under 100 MFLOP per sample";
  // flops_per_sample() counts forward + backward (3x forward); elementwise layers add about 1%.
  EXPECT_GE(g.flops_per_sample(), 0.9 * 3 * 2 * macs);
  EXPECT_LT(g.flops_per_sample(), 1.1 * 3 * 2 * macs);

  Model m(std::move(g), wt::testing::memory());
  const int64_t bn = 2;                                                 // weight + bias per channel
  const int64_t want = conv_params(1, 32, 3, false) + bn * 32 +         //
                       2 * (conv_params(32, 32, 3, false) + bn * 32) +  //
                       conv_params(32, 64, 3, false) + conv_params(64, 64, 3, false) +     //
                       conv_params(32, 64, 1, false) + 3 * bn * 64 +                       //
                       conv_params(64, 128, 3, false) + conv_params(128, 128, 3, false) +  //
                       conv_params(64, 128, 1, false) + 3 * bn * 128 + linear_params(128, 10);
  EXPECT_EQ(want, 308074);
  EXPECT_EQ(m.param_count(), want);
  EXPECT_GE(want, 300000);
  EXPECT_LE(want, 600000);
  size_t buffers = 0;
  for (const auto& st : m.stages) buffers += st.buffers.size();
  EXPECT_EQ(buffers, 2u * 9);  // running_mean and running_var of 9 batchnorms
}

TEST(Models, VggSmall) {
  SKIP_UNLESS_REGISTERED("conv2d", "batchnorm2d", "maxpool2d", "linear", "dropout");
  Graph g = Graph::load(model_path("vgg_small"));
  EXPECT_EQ(g.name, "vgg_small");
  EXPECT_EQ(node_named(g, "b1_relu2").out_shape, (Shape{32, 28, 28}));
  EXPECT_EQ(node_named(g, "b1_pool").out_shape, (Shape{32, 14, 14}));
  EXPECT_EQ(node_named(g, "b2_pool").out_shape, (Shape{64, 7, 7}));
  EXPECT_EQ(node_named(g, "b3_pool").out_shape, (Shape{128, 3, 3}));
  EXPECT_EQ(node_named(g, "flatten").out_shape, (Shape{1152}));
  EXPECT_EQ(node_named(g, "fc2").out_shape, (Shape{10}));
  const double macs = 784.0 * 9 * (1 * 32 + 32 * 32) + 196.0 * 9 * (32 * 64 + 64 * 64) +
                      49.0 * 9 * 64 * 128 + 1152.0 * 256 + 256.0 * 10;
  EXPECT_GE(g.flops_per_sample(), 0.9 * 3 * 2 * macs);
  EXPECT_LT(g.flops_per_sample(), 1.1 * 3 * 2 * macs);
  Model m(std::move(g), wt::testing::memory());
  const int64_t bn = 2;
  const int64_t want = conv_params(1, 32, 3, false) + conv_params(32, 32, 3, false) +
                       conv_params(32, 64, 3, false) + conv_params(64, 64, 3, false) +
                       conv_params(64, 128, 3, false) + bn * (32 + 32 + 64 + 64 + 128) +
                       linear_params(1152, 256) + linear_params(256, 10);
  EXPECT_EQ(want, 436906);
  EXPECT_EQ(m.param_count(), want);

  // Forward and backward on a tiny batch: a loss near ln(10) at initialisation, and every
  // parameter tensor receives a gradient.
  m.init(3);
  m.zero_grads();
  Rng rng(8);
  Tensor x = Tensor::empty({3, 1, 28, 28}, wt::testing::memory());
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = rng.uniform(-1.0f, 1.0f);
  const double loss = testing::run_model(m, x, {1, 7, 3}, true);
  EXPECT_GT(loss, 1.5);
  EXPECT_LT(loss, 3.5);
  for (const Stage& st : m.stages)
    for (const Param& p : st.params) {
      double norm = 0;
      for (int64_t i = 0; i < p.grad.numel(); ++i) norm += std::abs(p.grad.data()[i]);
      EXPECT_GT(norm, 0.0) << p.name;
    }
}

TEST(Models, TransformerSmall) {
  SKIP_UNLESS_REGISTERED("embedding", "position_embedding", "layernorm", "causal_self_attention",
                         "linear", "gelu", "token_softmax_xent");
  Graph g = Graph::load(model_path("transformer_small"));
  EXPECT_EQ(g.name, "transformer_small");
  EXPECT_EQ(g.input_shape, (Shape{64}));
  EXPECT_EQ(g.classes, 73);
  EXPECT_EQ(node_named(g, "tok_emb").out_shape, (Shape{64, 128}));
  EXPECT_EQ(node_named(g, "b0_fc1").out_shape, (Shape{64, 512}));
  EXPECT_EQ(node_named(g, "b3_add2").out_shape, (Shape{64, 128}));
  EXPECT_EQ(node_named(g, "head").out_shape, (Shape{64, 73}));
  EXPECT_EQ(g.nodes.back().layer->labels_per_sample(), 64);
  Model m(std::move(g), wt::testing::memory());
  const int64_t d = 128, block = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) +
                                 linear_params(d, 4 * d) + linear_params(4 * d, d);
  const int64_t want = 73 * d + 64 * d + 4 * block + 2 * d + linear_params(d, 73);
  EXPECT_EQ(want, 820297);
  EXPECT_EQ(m.param_count(), want);
}

// The whole transformer stack, finite differences against backward, on a tiny configuration
// (vocab 7, T 5, d 8, 2 heads, one block): embedding, position embedding, layer norms,
// attention, GELU MLP, residual adds and the per-token loss together.
// A two-block transformer on 5 tokens of a 7-token vocabulary, written to a temporary file.
std::string write_tiny_transformer() {
  const std::string path = ::testing::TempDir() + "wt_tiny_transformer.toml";
  std::ofstream(path) << R"(
[model]
name = "tiny"
input = [5]
classes = 7
[[layer]]
name = "tok"
type = "embedding"
vocab = 7
dim = 8
[[layer]]
name = "pos"
type = "position_embedding"
[[layer]]
name = "ln1"
type = "layernorm"
[[layer]]
name = "attn"
type = "causal_self_attention"
heads = 2
[[layer]]
name = "add1"
type = "add"
inputs = ["attn", "pos"]
[[layer]]
name = "ln2"
type = "layernorm"
[[layer]]
name = "fc1"
type = "linear"
out_features = 16
[[layer]]
name = "gelu"
type = "gelu"
[[layer]]
name = "fc2"
type = "linear"
out_features = 8
[[layer]]
name = "add2"
type = "add"
inputs = ["fc2", "add1"]
[[layer]]
name = "lnf"
type = "layernorm"
[[layer]]
name = "head"
type = "linear"
out_features = 7
[[layer]]
name = "loss"
type = "token_softmax_xent"
)";
  return path;
}

TEST(Models, TinyTransformerGradientsMatchFiniteDifferences) {
  SKIP_UNLESS_REGISTERED("embedding", "position_embedding", "layernorm", "causal_self_attention",
                         "linear", "gelu", "token_softmax_xent");
  const std::string path = write_tiny_transformer();
  Model m(Graph::load(path), wt::testing::memory());
  m.init(5);
  // Embeddings start at N(0, 0.02); larger values make every path's gradient well above noise.
  Rng rng(6);
  for (Stage& st : m.stages)
    for (int64_t i = 0; i < st.values.numel(); ++i) st.values.data()[i] += rng.uniform(-0.3f, 0.3f);
  Tensor x = Tensor::empty({2, 5}, wt::testing::memory());
  std::vector<int32_t> y;
  for (int64_t i = 0; i < 10; ++i) {
    x.data()[i] = float(rng.below(7));
    y.push_back(int32_t(rng.below(7)));
  }
  m.zero_grads();
  testing::run_model(m, x, y, true);
  Stage& st = m.stages.at(0);
  std::vector<float> analytic(st.grads.data(), st.grads.data() + st.grads.numel());
  const double eps = 1e-2;
  int checked = 0, large = 0;
  for (Param& p : st.params) {
    const int64_t step = std::max<int64_t>(1, p.value.numel() / 6);
    for (int64_t i = 0; i < p.value.numel(); i += step) {
      float* v = p.value.data() + i;
      const float orig = *v;
      *v = orig + float(eps);
      const double lp = testing::run_model(m, x, y, false);
      *v = orig - float(eps);
      const double lm = testing::run_model(m, x, y, false);
      *v = orig;
      const double numeric = (lp - lm) / (2 * eps);
      const double a = analytic[size_t(p.grad.data() + i - st.grads.data())];
      EXPECT_NEAR(a, numeric, 2e-3 + 0.05 * std::abs(numeric)) << p.name << "[" << i << "]";
      ++checked;
      large += std::abs(numeric) > 1e-2;
    }
  }
  EXPECT_GT(checked, 80);
  EXPECT_GT(large, checked / 4) << "too few gradients above noise for the check to mean much";
}

// ---- Graph::load error reporting --------------------------------------------------------------

class GraphLoadErrors : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string path = ::testing::TempDir() + "wt_graph_" + info->name() + ".toml";
    std::ofstream(path) << text;
    return path;
  }
  // Loads `text` and expects an InputError at `line` whose message contains `fragment`.
  void expect_error(const std::string& text, int line, const std::string& fragment) {
    const std::string path = write(text);
    try {
      Graph::load(path);
      FAIL() << "no InputError for:\n" << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
  static constexpr const char* kHeader =
      "[model]\n"        // 1
      "name = \"t\"\n"   // 2
      "input = [10]\n"   // 3
      "classes = 10\n";  // 4
};

TEST_F(GraphLoadErrors, ValidSmallModelLoads) {
  Graph g = Graph::load(write(std::string(kHeader) +
                              "[[layer]]\nname = \"r\"\ntype = \"relu\"\n"
                              "[[layer]]\nname = \"d\"\ntype = \"dropout\"\np = 0.1\n"
                              "[[layer]]\nname = \"sum\"\ntype = \"add\"\ninputs = [\"r\", \"d\"]\n"
                              "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n"));
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[2].inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<int>{kGraphInput}));
  EXPECT_EQ(g.nodes[3].out_shape, (Shape{1}));
}

TEST_F(GraphLoadErrors, UnknownLayerType) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\n"          // 5
                   "name = \"c\"\n"       // 6
                   "type = \"conv3d\"\n"  // 7
                   "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n",
               7, "unknown layer type 'conv3d' (known:");
}

TEST_F(GraphLoadErrors, UnknownKeyInLayer) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\n"        // 5
                   "name = \"r\"\n"     // 6
                   "type = \"relu\"\n"  // 7
                   "slope = 0.1\n"      // 8
                   "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n",
               8, "unknown key");
}

TEST_F(GraphLoadErrors, BadKeyValue) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\n"           // 5
                   "name = \"d\"\n"        // 6
                   "type = \"dropout\"\n"  // 7
                   "p = 1.5\n"             // 8
                   "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n",
               8, "out of range");
}

TEST_F(GraphLoadErrors, InputsNamingALaterLayer) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\n"             // 5
                   "name = \"r\"\n"          // 6
                   "type = \"relu\"\n"       // 7
                   "inputs = [\"later\"]\n"  // 8
                   "[[layer]]\nname = \"later\"\ntype = \"relu\"\n"
                   "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n",
               8, "'later' is not an earlier layer");
}

TEST_F(GraphLoadErrors, LastLayerNotALoss) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\nname = \"r\"\ntype = \"relu\"\n"  // 5-7
                   "[[layer]]\n"                                 // 8
                   "name = \"g\"\n"                              // 9
                   "type = \"gelu\"\n",                          // 10
               8, "the last layer must be a loss layer");
}

TEST_F(GraphLoadErrors, LossLayerInTheMiddle) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\n"                // 5
                   "name = \"early\"\n"         // 6
                   "type = \"softmax_xent\"\n"  // 7
                   "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\ninputs = [\"input\"]\n",
               5, "a loss layer must be the last layer");
}

TEST_F(GraphLoadErrors, AddOfMismatchedShapes) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\nname = \"r\"\ntype = \"relu\"\n"              // 5-7
                   "[[layer]]\nname = \"loss1\"\ntype = \"softmax_xent\"\n"  // 8-10: shape [1]
                   "[[layer]]\n"                                             // 11
                   "name = \"sum\"\ntype = \"add\"\ninputs = [\"r\", \"loss1\"]\n"
                   "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n",
               11, "same shape");
}

TEST_F(GraphLoadErrors, TomlSyntaxError) {
  expect_error(std::string(kHeader) +
                   "[[layer]]\n"           // 5
                   "name = \"r\"\n"        // 6
                   "type = = \"relu\"\n",  // 7
               7, "TOML syntax error");
}

TEST_F(GraphLoadErrors, MissingFile) {
  try {
    Graph::load(::testing::TempDir() + "wt_no_such_model.toml");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 0);
  }
}

}  // namespace
}  // namespace wt
