#include "exec/schedule_input.hpp"

namespace wt {

ScheduleInput make_schedule_input(const Model& model, const ScheduleOptions& options,
                                  int64_t global_batch, int world_size) {
  std::vector<int> cuts;
  for (size_t s = 1; s < model.stages.size(); ++s) cuts.push_back(model.stages[s].node_begin);
  return make_schedule_input(model.graph, cuts, options, global_batch, world_size);
}

ScheduleInput make_schedule_input(const Graph& graph, const std::vector<int>& cuts,
                                  const ScheduleOptions& options, int64_t global_batch,
                                  int world_size) {
  ScheduleInput in;
  in.world_size = world_size;
  in.deck = options;
  in.global_batch = global_batch;
  const auto& nodes = graph.nodes;
  std::vector<int> bounds{0};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(static_cast<int>(nodes.size()));
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    StageInfo info{bounds[s], bounds[s + 1], {}};
    for (int n = info.node_begin; n < info.node_end; ++n) {
      int64_t count = 0;
      for (const auto& spec : nodes[n].layer->param_specs()) count += shape_numel(spec.shape);
      info.node_param_bytes.push_back(count * int64_t(sizeof(float)));
      info.node_activation_bytes.push_back(shape_numel(nodes[n].out_shape) * sizeof(float));
    }
    if (s > 0)
      info.in_bytes_per_sample = shape_numel(nodes[info.node_begin - 1].out_shape) * sizeof(float);
    if (s + 2 < bounds.size())
      info.out_bytes_per_sample = shape_numel(nodes[info.node_end - 1].out_shape) * sizeof(float);
    in.stages.push_back(info);
  }
  return in;
}

}  // namespace wt
