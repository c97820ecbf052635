#include "pricing/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wt {

namespace {

constexpr double kFloat = sizeof(float);

int64_t numel_of(const std::vector<Layer::ParamSpec>& specs) {
  int64_t n = 0;
  for (const auto& s : specs) n += shape_numel(s.shape);
  return n;
}

}  // namespace

int optimizer_state_floats(const std::string& kind, double momentum) {
  if (kind == "adamw" || kind == "adam") return 2;
  return momentum != 0 ? 1 : 0;
}

CostModel::CostModel(const Graph& graph, const std::vector<int>& cuts, DeviceModel device,
                     const LayerProfile* profile, int optimizer_state_floats)
    : device_(std::move(device)),
      profile_(profile),
      optimizer_state_floats_(optimizer_state_floats) {
  const int n = static_cast<int>(graph.nodes.size());
  if (profile_ && static_cast<int>(profile_->timing.size()) != n)
    throw std::invalid_argument("the layer profile has " + std::to_string(profile_->timing.size()) +
                                " layers, the model " + std::to_string(n));
  for (const Node& node : graph.nodes) {
    NodeCost c;
    c.params = numel_of(node.layer->param_specs());
    c.buffers = numel_of(node.layer->buffer_specs());
    c.out_bytes = shape_numel(node.out_shape) * int64_t(kFloat);
    // flops_per_sample() counts forward and backward; backward is about twice forward.
    c.forward_flops = node.layer->flops_per_sample() / 3.0;
    double in_bytes = 0;
    for (int src : node.inputs)
      in_bytes += kFloat * double(shape_numel(src == kGraphInput ? graph.input_shape
                                                                 : graph.nodes[src].out_shape));
    c.forward_bytes = in_bytes + double(c.out_bytes);
    nodes_.push_back(c);
  }
  int begin = 0;
  for (int cut : cuts) {
    stage_begin_.push_back(begin);
    stage_end_.push_back(cut);
    begin = cut;
  }
  stage_begin_.push_back(begin);
  stage_end_.push_back(n);
}

void CostModel::range(int stage, int* begin, int* end) const {
  if (*begin < 0) *begin = stage_begin_.at(stage);
  if (*end < 0) *end = stage_end_.at(stage);
}

double CostModel::node_forward_s(int node, int64_t samples) const {
  if (profile_) return profile_->forward_s(node, samples);
  const NodeCost& c = nodes_[node];
  const double flops = c.forward_flops * double(samples);
  const double bytes = c.forward_bytes * double(samples) + kFloat * double(c.params);
  return std::max(flops / (device_.peak_flops * device_.efficiency),
                  bytes / device_.memory_bandwidth) +
         device_.launch_s;
}

double CostModel::node_backward_s(int node, int64_t samples) const {
  if (profile_) return profile_->backward_s(node, samples);
  const NodeCost& c = nodes_[node];
  const double flops = 2 * c.forward_flops * double(samples);
  const double bytes = 2 * c.forward_bytes * double(samples) + 2 * kFloat * double(c.params);
  return std::max(flops / (device_.peak_flops * device_.efficiency),
                  bytes / device_.memory_bandwidth) +
         device_.launch_s;
}

double CostModel::forward_s(int stage, int node_begin, int node_end, int64_t samples) const {
  range(stage, &node_begin, &node_end);
  double t = 0;
  for (int n = node_begin; n < node_end; ++n) t += node_forward_s(n, samples);
  return t;
}

double CostModel::backward_s(int stage, int node_begin, int node_end, int64_t samples) const {
  range(stage, &node_begin, &node_end);
  double t = 0;
  for (int n = node_begin; n < node_end; ++n) t += node_backward_s(n, samples);
  return t;
}

double CostModel::launch_s(int stage, int node_begin, int node_end) const {
  if (profile_) return 0;
  range(stage, &node_begin, &node_end);
  return device_.launch_s * double(node_end - node_begin);
}

double CostModel::step_s(int stage) const {
  // Reads parameter and gradient and each state float, writes parameter and state.
  const double bytes = double(grad_bytes(stage)) * (3.0 + 2.0 * optimizer_state_floats_);
  return bytes / device_.memory_bandwidth + device_.launch_s;
}

double CostModel::gradient_copy_s(int stage) const {
  return 3.0 * double(grad_bytes(stage)) / device_.memory_bandwidth + device_.launch_s;
}

double CostModel::memory_copy_s(int64_t bytes) const {
  return 2.0 * double(bytes) / device_.memory_bandwidth + device_.launch_s;  // read and write
}

int64_t CostModel::param_bytes(int stage) const {
  int64_t b = 0;
  for (int n = stage_begin_.at(stage); n < stage_end_.at(stage); ++n)
    b += (nodes_[n].params + nodes_[n].buffers) * int64_t(kFloat);
  return b;
}

int64_t CostModel::grad_bytes(int stage, int node_begin, int node_end) const {
  range(stage, &node_begin, &node_end);
  int64_t b = 0;
  for (int n = node_begin; n < node_end; ++n) b += nodes_[n].params * int64_t(kFloat);
  return b;
}

int64_t CostModel::optimizer_bytes(int stage) const {
  return grad_bytes(stage) * optimizer_state_floats_;
}

int64_t CostModel::saved_bytes(int stage, int node_begin, int node_end, int64_t samples) const {
  range(stage, &node_begin, &node_end);
  int64_t b = 0;
  for (int n = node_begin; n < node_end; ++n) b += nodes_[n].out_bytes;
  return b * samples;
}

int64_t CostModel::backward_working_bytes(int stage, int node_begin, int node_end,
                                          int64_t samples) const {
  range(stage, &node_begin, &node_end);
  int64_t most = 0;
  for (int n = node_begin; n < node_end; ++n)
    most = std::max(most, nodes_[n].out_bytes + (n > 0 ? nodes_[n - 1].out_bytes : 0));
  return most * samples;
}

bool CostModel::crosses_nodes(const std::vector<int>& group) const {
  const int per_node = std::max(1, device_.ranks_per_node);
  for (int r : group)
    if (r / per_node != group.front() / per_node) return true;
  return false;
}

CostModel::Link CostModel::link(const std::vector<int>& ranks) const {
  return crosses_nodes(ranks) ? Link{device_.inter_alpha_s, device_.inter_bytes_per_s}
                              : Link{device_.intra_alpha_s, device_.intra_bytes_per_s};
}

double CostModel::message_s(int64_t bytes, int from, int to) const {
  const Link l = link({from, to});
  return l.alpha_s + double(bytes) / l.bytes_per_s;
}

// Ring algorithms, as NCCL runs them for large messages: an allreduce moves 2(p-1)/p of the
// buffer through every link in 2(p-1) latency steps; a broadcast or reduce pipelines the buffer
// down a chain, about one buffer per link plus p-1 latencies. The slowest link sets the pace.
double CostModel::allreduce_s(int64_t bytes, const std::vector<int>& group) const {
  const double p = double(group.size());
  if (p <= 1) return 0;
  const Link l = link(group);
  return 2 * (p - 1) * l.alpha_s + 2 * (p - 1) / p * double(bytes) / l.bytes_per_s;
}

double CostModel::broadcast_s(int64_t bytes, const std::vector<int>& group) const {
  const double p = double(group.size());
  if (p <= 1) return 0;
  const Link l = link(group);
  return (p - 1) * l.alpha_s + double(bytes) / l.bytes_per_s;
}

}  // namespace wt
