#include "model/block_channels.hpp"

#include <vector>

#include "ops/kernel_args.hpp"

namespace wt {
namespace {

// Whether every reader of node i's output, looking through pass-through nodes, reads it alone
// and can read it blocked; the pass-through nodes on the way are added to `through`.
bool readers_take_blocked(const Graph& graph, const std::vector<std::vector<int>>& readers, int i,
                          std::vector<int>& through) {
  if (readers[size_t(i)].empty()) return false;
  for (const int r : readers[size_t(i)]) {
    const Node& reader = graph.nodes[size_t(r)];
    if (reader.inputs.size() != 1) return false;
    if (reader.layer->passes_through()) {
      through.push_back(r);
      if (!readers_take_blocked(graph, readers, r, through)) return false;
    } else if (!reader.layer->can_block_input()) {
      return false;
    }
  }
  return true;
}

}  // namespace

int block_channels(Graph& graph) {
  const std::vector<std::vector<int>> readers = graph.consumers();
  const size_t count = graph.nodes.size();
  std::vector<char> blocked(count, 0);  // whether node i's output tensor is kept blocked
  auto input_blocked = [&](const Node& node) {
    return node.inputs.size() == 1 && node.inputs[0] != kGraphInput &&
           blocked[size_t(node.inputs[0])];
  };
  int tensors = 0;
  for (size_t i = 0; i < count; ++i) {  // file order is topological
    const Node& node = graph.nodes[i];
    if (node.layer->passes_through() || int(i) == graph.loss_node()) continue;
    const Shape& out = node.out_shape;
    if (out.size() != 3 || !ops::channels_blockable(out[0])) continue;
    if (!node.layer->can_block_output(input_blocked(node))) continue;
    std::vector<int> through;
    if (!readers_take_blocked(graph, readers, int(i), through)) continue;
    blocked[i] = 1;
    for (const int t : through) blocked[size_t(t)] = 1;
    ++tensors;
  }
  for (size_t i = 0; i < count; ++i) {
    Node& node = graph.nodes[i];
    if (node.layer->passes_through()) continue;
    const bool in = input_blocked(node), out = blocked[i] != 0;
    if (in || out) node.layer->block_channels(in, out);
  }
  return tensors;
}

}  // namespace wt
