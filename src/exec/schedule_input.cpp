#include "exec/schedule_input.hpp"

namespace wt {

ScheduleInput make_schedule_input(const Model& model, const RunConfig& config, int world_size) {
  ScheduleInput in;
  in.world_size = world_size;
  in.deck = config.schedule;
  in.global_batch = config.train.global_batch;
  const auto& nodes = model.graph.nodes;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    const Stage& st = model.stages[s];
    StageInfo info{st.node_begin, st.node_end, {}};
    for (int n = st.node_begin; n < st.node_end; ++n) {
      info.node_param_bytes.push_back(st.node_count[n - st.node_begin] * int64_t(sizeof(float)));
      info.node_activation_bytes.push_back(shape_numel(nodes[n].out_shape) * sizeof(float));
    }
    if (s > 0)
      info.in_bytes_per_sample = shape_numel(nodes[st.node_begin - 1].out_shape) * sizeof(float);
    if (s + 1 < model.stages.size())
      info.out_bytes_per_sample = shape_numel(nodes[st.node_end - 1].out_shape) * sizeof(float);
    in.stages.push_back(info);
  }
  return in;
}

}  // namespace wt
