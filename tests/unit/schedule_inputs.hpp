#pragma once
// A model cut into n stages of 3 nodes each, with 100-byte activations per sample at every cut:
// the input the schedule tests hand to the generators.
#include <cstdint>
#include <vector>

#include "sched/schedule_registry.hpp"

namespace wt_test {

inline wt::ScheduleInput chain_of_stages(int n, int world, int microbatches = 1,
                                         std::vector<int64_t> node_param_bytes = {400, 0, 0}) {
  wt::ScheduleInput in;
  in.world_size = world;
  in.global_batch = 16;
  in.deck.microbatches = microbatches;
  for (int s = 0; s < n; ++s) {
    wt::StageInfo st{3 * s, 3 * s + 3, node_param_bytes};
    st.in_bytes_per_sample = s > 0 ? 100 : 0;
    st.out_bytes_per_sample = s + 1 < n ? 100 : 0;
    in.stages.push_back(st);
  }
  return in;
}

}  // namespace wt_test
