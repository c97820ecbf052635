#pragma once
// Prices the simulator's instructions and the planners' steps: compute per stage and batch size,
// optimizer steps, bytes held, and messages and collectives over the device's links. Layer times
// come from a measured LayerProfile when one is given (the profiling step), else from the device's
// roofline: a pass takes the longer of its FLOPs at peak * efficiency and its bytes at memory
// bandwidth, plus a launch cost. Backward is priced at twice forward's FLOPs and bytes.
#include <cstdint>
#include <vector>

#include "model/graph.hpp"
#include "pricing/device_model.hpp"
#include "pricing/layer_profile.hpp"

namespace wt {

class CostModel {
 public:
  // cuts: first node of every stage after the first. optimizer_state_floats: per parameter
  // (2 for Adam, 1 for SGD with momentum). profile may be null; it must match the graph.
  CostModel(const Graph& graph, const std::vector<int>& cuts, DeviceModel device,
            const LayerProfile* profile, int optimizer_state_floats);

  int stages() const { return static_cast<int>(stage_begin_.size()); }
  const DeviceModel& device() const { return device_; }
  bool profiled() const { return profile_ != nullptr; }

  // Nodes [node_begin, node_end) of the stage; -1 for the whole stage.
  double forward_s(int stage, int node_begin, int node_end, int64_t samples) const;
  double backward_s(int stage, int node_begin, int node_end, int64_t samples) const;
  // The fixed part of those passes: the device's launch_s per node (0 with a measured profile,
  // whose fixed times are not split out).
  double launch_s(int stage, int node_begin, int node_end) const;
  double step_s(int stage) const;             // optimizer update: memory bound
  double gradient_copy_s(int stage) const;    // keep / add a stage's gradient (tick-tock)
  double memory_copy_s(int64_t bytes) const;  // a copy within device memory (burst's CopyRows)

  int64_t param_bytes(int stage) const;  // parameters and buffers
  int64_t grad_bytes(int stage, int node_begin = -1, int node_end = -1) const;
  int64_t optimizer_bytes(int stage) const;
  // Activations a forward pass keeps for backward: every node's output.
  int64_t saved_bytes(int stage, int node_begin, int node_end, int64_t samples) const;
  // What a backward pass holds beside them while it runs: at its largest node, the gradient of
  // the node's output and the one of its input, both alive at once (the input taken as the
  // previous node's output; none for the model's first node).
  int64_t backward_working_bytes(int stage, int node_begin, int node_end, int64_t samples) const;

  // One message between two world ranks, and collectives over a group of world ranks.
  double message_s(int64_t bytes, int from, int to) const;
  double allreduce_s(int64_t bytes, const std::vector<int>& group) const;
  double broadcast_s(int64_t bytes, const std::vector<int>& group) const;  // and reduce

 private:
  struct NodeCost {
    double forward_flops = 0, forward_bytes = 0;  // per sample
    int64_t params = 0, buffers = 0, out_bytes = 0;
  };
  double node_forward_s(int node, int64_t samples) const;
  double node_backward_s(int node, int64_t samples) const;
  void range(int stage, int* begin, int* end) const;
  bool crosses_nodes(const std::vector<int>& group) const;
  struct Link {
    double alpha_s, bytes_per_s;
  };
  Link link(const std::vector<int>& ranks) const;  // the slowest link among `ranks`

  DeviceModel device_;
  const LayerProfile* profile_;
  int optimizer_state_floats_;
  std::vector<NodeCost> nodes_;
  std::vector<int> stage_begin_, stage_end_;
};

// Optimizer state floats per parameter for an optimizer kind and momentum.
int optimizer_state_floats(const std::string& kind, double momentum);

}  // namespace wt
