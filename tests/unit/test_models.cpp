// The model files in models/ (which need the conv/linear/pool layers as well, so those tests skip
// until every type they use is registered) and Graph::load's error reporting, checked with small
// model files that use only always-present layer types.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "deck/input_error.hpp"
#include "model/graph.hpp"
#include "model/layer_registry.hpp"
#include "model/model.hpp"

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
  Model m(std::move(g));
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
  Model m(std::move(g));
  const int64_t want = conv_params(1, 32, 5, true) + conv_params(32, 64, 5, true) +
                       linear_params(3136, 256) + linear_params(256, 10);
  EXPECT_EQ(want, 857738);
  EXPECT_EQ(m.param_count(), want);
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

  Model m(std::move(g));
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
