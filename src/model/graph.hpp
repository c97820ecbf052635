#pragma once
// A static layer graph read from a model file (models/*.toml). Nodes are in file order, which must
// be topological; a node's inputs default to the previous node, and "input" is the model input.
//
//   [model]
//   name = "lenet"
//   input = [1, 28, 28]     # per-sample shape
//   classes = 10
//   [[layer]]
//   name = "conv1"
//   type = "conv2d"
//   inputs = ["input"]      # optional; several for "add"
//   out_channels = 32 ...
#include <memory>
#include <string>
#include <vector>

#include "model/layer.hpp"

namespace wt {

struct Node {
  std::string name;
  std::string type;
  std::vector<int> inputs;  // node indices; kGraphInput for the model input
  std::unique_ptr<Layer> layer;
  Shape out_shape;  // per sample
  int line = 0;     // line of the [[layer]] table in the model file
};

constexpr int kGraphInput = -1;

class Graph {
 public:
  static Graph load(const std::string& path);

  std::string name;
  std::string file;
  Shape input_shape;
  int classes = 0;
  std::vector<Node> nodes;  // the last node is the loss layer

  int loss_node() const { return static_cast<int>(nodes.size()) - 1; }
  // For each node, the nodes that read its output.
  std::vector<std::vector<int>> consumers() const;
  // For each node, whether the loss's gradient with respect to its output is of any use: true
  // when it or a node it reads from (directly or not) has parameters. A backward pass need not
  // compute the others (mlp's flatten of the input: fc1 would compute a [64, 784] input gradient
  // that nothing reads, a quarter of the model's GEMM work).
  std::vector<char> output_gradient_needed() const;
  double flops_per_sample() const;
};

}  // namespace wt
