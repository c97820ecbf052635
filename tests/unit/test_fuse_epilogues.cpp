// The epilogue-fusion graph pass (model/fuse_epilogues.hpp) and the channel-blocking one that
// follows it on the host (model/block_channels.hpp): which ReLUs and tensors they take, and that
// models train to bitwise the same losses with them and without, on the host and the strict device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "device/device_context.hpp"
#include "model/block_channels.hpp"
#include "model/fuse_epilogues.hpp"
#include "model/graph_pass.hpp"
#include "model/model.hpp"
#include "ops/host/host_ops.hpp"
#include "tensor/rng.hpp"

namespace wt {
namespace {

std::string model_path(const std::string& name) {
  return std::string(WT_SOURCE_DIR) + "/models/" + name + ".toml";
}

std::string write_model(const std::string& name, const std::string& layers) {
  // One file per process: ctest runs the Host and Strict instances side by side.
  const std::string path =
      ::testing::TempDir() + "wt_fuse_" + name + "_" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << "[model]\nname = \"" << name << "\"\ninput = [1, 6, 6]\nclasses = 4\n"
                      << layers;
  return path;
}

// A conv whose ReLU no pooling reads (the conv masks), a linear whose ReLU the loss reads (the
// linear masks, with its bias gradient).
std::string conv_without_pool() {
  return write_model("conv_without_pool",
                     "[[layer]]\nname = \"conv\"\ntype = \"conv2d\"\nout_channels = 3\n"
                     "kernel = 3\npadding = 1\n"
                     "[[layer]]\nname = \"r1\"\ntype = \"relu\"\n"
                     "[[layer]]\nname = \"flat\"\ntype = \"flatten\"\n"
                     "[[layer]]\nname = \"fc\"\ntype = \"linear\"\nout_features = 4\n"
                     "[[layer]]\nname = \"r2\"\ntype = \"relu\"\n"
                     "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n");
}

// fc1's output is read by its ReLU and by the add: that ReLU must stay; fc2's is folded.
std::string shared_output() {
  return write_model(
      "shared_output",
      "[[layer]]\nname = \"flat\"\ntype = \"flatten\"\n"
      "[[layer]]\nname = \"fc1\"\ntype = \"linear\"\nout_features = 8\n"
      "[[layer]]\nname = \"r1\"\ntype = \"relu\"\n"
      "[[layer]]\nname = \"sum\"\ntype = \"add\"\ninputs = [\"fc1\", \"r1\"]\n"
      "[[layer]]\nname = \"fc2\"\ntype = \"linear\"\nout_features = 4\nbias = false\n"
      "[[layer]]\nname = \"r2\"\ntype = \"relu\"\n"
      "[[layer]]\nname = \"fc3\"\ntype = \"linear\"\nout_features = 4\n"
      "[[layer]]\nname = \"loss\"\ntype = \"softmax_xent\"\n");
}

TEST(FuseEpilogues, FoldsTheReluAfterEveryConvAndLinearThatNothingElseReads) {
  Graph lenet = Graph::load(model_path("lenet"));
  const double flops = lenet.flops_per_sample();
  EXPECT_EQ(fuse_epilogues(lenet), 3);
  EXPECT_EQ(lenet.nodes.size(), 11u);  // the nodes stay: initialisation and cuts are unchanged
  EXPECT_EQ(lenet.flops_per_sample(), flops);
  EXPECT_EQ(std::string(lenet.nodes[1].layer->type()), "relu");
  Graph mlp = Graph::load(model_path("mlp"));
  EXPECT_EQ(fuse_epilogues(mlp), 2);
  Graph shared = Graph::load(shared_output());
  EXPECT_EQ(fuse_epilogues(shared), 1);
  Graph resnet = Graph::load(model_path("resnet"));  // every ReLU follows a batchnorm or an add
  EXPECT_EQ(fuse_epilogues(resnet), 0);
}

TEST(BlockChannels, KeepsConvolutionAndPoolingTensorsBlockedWhereEveryReaderTakesThem) {
  Graph lenet = Graph::load(model_path("lenet"));
  fuse_epilogues(lenet);
  // conv1 -> pool1 (through relu1), pool1 -> conv2, conv2 -> pool2; not pool2 -> flatten.
  EXPECT_EQ(block_channels(lenet), 3);
  Graph vgg = Graph::load(model_path("vgg_small"));  // a batchnorm reads every conv's output
  fuse_epilogues(vgg);
  EXPECT_EQ(block_channels(vgg), 0);
  // Unfused, a real ReLU reads each conv's output (as NCHW), and a pool whose input is NCHW
  // writes NCHW: nothing is blocked.
  Graph unfused = Graph::load(model_path("lenet"));
  EXPECT_EQ(block_channels(unfused), 0);
  Graph mlp = Graph::load(model_path("mlp"));
  fuse_epilogues(mlp);
  EXPECT_EQ(block_channels(mlp), 0);
  // 3 channels: not a multiple of 16, so never blocked.
  Graph small = Graph::load(conv_without_pool());
  fuse_epilogues(small);
  EXPECT_EQ(block_channels(small), 0);
}

// What a graph pass does to the graph before training (train_losses).
enum class Passes { None, Fuse, FuseAndBlockPool2sOutput };

// The losses of `steps` SGD steps with momentum on one fixed batch of 16 samples.
std::vector<double> train_losses(const std::string& path, Passes passes, DeviceKind kind,
                                 int steps) {
  DeviceContext device(0, kind, 3);
  Graph graph = Graph::load(path);
  if (passes != Passes::None) {
    EXPECT_GT(fuse_epilogues(graph), 0);
    // As the job does: the host's kernels take blocked activations (with oneDNN), strict's not.
    if (device.ops().takes_blocked_activations()) block_channels(graph);
  }
  if (passes == Passes::FuseAndBlockPool2sOutput)  // a planted layout bug: flatten reads NCHW
    graph.nodes.at(5).layer->block_channels(/*input=*/true, /*output=*/true);
  Model model(std::move(graph), device.allocator());
  model.init(42);
  const int64_t batch = 16;
  Shape shape{batch};
  for (int64_t d : model.graph.input_shape) shape.push_back(d);
  Tensor x = Tensor::empty(shape, device.allocator());
  std::vector<float> pixels(static_cast<size_t>(x.numel()));
  Rng rng(5);
  for (float& p : pixels) p = rng.uniform(0.0f, 1.0f);
  x.copy_from_host(pixels.data());
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) labels[size_t(i)] = int32_t(i % model.graph.classes);
  Stage& stage = model.stages.at(0);
  Tensor momentum = Tensor::zeros({stage.param_count()}, device.allocator());
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    model.zero_grads();
    losses.push_back(run_graph_pass(model, device.ops(), x, labels, /*backward=*/true));
    ops::SgdUpdate update;
    update.lr = 0.05f;
    update.momentum = 0.9f;
    update.first = step == 0;
    device.ops().sgd_update(update, stage.param_count(), stage.values.device_ptr(),
                            stage.grads.device_ptr(), momentum.device_ptr(), nullptr);
  }
  device.synchronize();
  return losses;
}

void expect_bitwise_same_losses(const std::string& path, DeviceKind kind, int steps) {
  const std::vector<double> fused = train_losses(path, Passes::Fuse, kind, steps);
  const std::vector<double> unfused = train_losses(path, Passes::None, kind, steps);
  ASSERT_EQ(fused.size(), unfused.size());
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_EQ(std::memcmp(&fused[i], &unfused[i], sizeof(double)), 0)
        << "step " << i << ": fused " << fused[i] << ", unfused " << unfused[i];
  EXPECT_LT(fused.back(), fused.front());  // it did train
}

class FuseEpiloguesTraining : public ::testing::TestWithParam<DeviceKind> {};

TEST_P(FuseEpiloguesTraining, LenetLossesAreBitwiseTheSame) {
  expect_bitwise_same_losses(model_path("lenet"), GetParam(), 4);
}
TEST_P(FuseEpiloguesTraining, MlpLossesAreBitwiseTheSame) {
  expect_bitwise_same_losses(model_path("mlp"), GetParam(), 4);
}
TEST_P(FuseEpiloguesTraining, ConvWithoutPoolAndSharedOutputLossesAreBitwiseTheSame) {
  expect_bitwise_same_losses(conv_without_pool(), GetParam(), 4);
  expect_bitwise_same_losses(shared_output(), GetParam(), 4);
}

// The bitwise comparison catches a layout mismatch: pool2's output blocked while flatten and fc1
// read it as NCHW trains another model.
TEST_P(FuseEpiloguesTraining, ATensorBlockedForAnNchwReaderChangesTheLosses) {
  if (!HostOps().takes_blocked_activations()) GTEST_SKIP() << "built without oneDNN";
  const std::string lenet = model_path("lenet");
  ASSERT_EQ(std::string(Graph::load(lenet).nodes.at(5).type), "maxpool2d");
  const std::vector<double> planted =
      train_losses(lenet, Passes::FuseAndBlockPool2sOutput, GetParam(), 3);
  const std::vector<double> unfused = train_losses(lenet, Passes::None, GetParam(), 3);
  EXPECT_NE(planted.back(), unfused.back());
}

INSTANTIATE_TEST_SUITE_P(Devices, FuseEpiloguesTraining,
                         ::testing::Values(DeviceKind::Host, DeviceKind::Strict),
                         [](const ::testing::TestParamInfo<DeviceKind>& info) {
                           return info.param == DeviceKind::Host ? "Host" : "Strict";
                         });

}  // namespace
}  // namespace wt
