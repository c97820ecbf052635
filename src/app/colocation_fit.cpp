#include "app/colocation_fit.hpp"

#include <string>

#include "job/job.hpp"
#include "mem/caching_allocator.hpp"
#include "pricing/cost_model.hpp"

namespace wt {

void check_nodes_fit_beside(const std::vector<RunConfig>& decks, const std::vector<Job*>& jobs,
                            int64_t memory_limit, int ranks) {
  if (memory_limit <= 0) return;
  // Resident: parameters, their gradients and the optimizer's state, as a step holds them.
  int64_t resident = 0;
  std::string each;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const RunConfig& deck = decks[k];
    const int64_t floats = 2 + optimizer_state_floats(deck.optimizer.kind, deck.optimizer.momentum);
    const int64_t bytes = jobs[k]->model().param_count() * floats * int64_t(sizeof(float));
    resident += bytes;
    each += (each.empty() ? "" : ", ") + deck.run.name + " " + std::to_string(bytes);
  }
  const int64_t left = memory_limit - resident;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const RunConfig& deck = decks[k];
    const int64_t samples = (deck.train.global_batch + ranks - 1) / ranks;
    const auto& nodes = jobs[k]->model().graph.nodes;
    for (size_t n = 0; n < nodes.size(); ++n) {
      const int64_t bytes = int64_t(CachingAllocator::round_size(
          size_t(shape_numel(nodes[n].out_shape) * samples) * sizeof(float)));
      if (bytes <= left) continue;
      throw OutOfMemory(
          "co-location: node " + std::to_string(n) + " '" + nodes[n].name + "' of job '" +
              deck.run.name + "' (" + deck.deck_path + ") needs " + std::to_string(bytes) +
              " bytes for its output at " + std::to_string(samples) +
              " samples per rank, more than the " + std::to_string(left) +
              " bytes the budget leaves (device.memory_limit = " + std::to_string(memory_limit) +
              " less the jobs' parameters, gradients and optimizer state: " + each +
              "): no pairing of node groups can run it; lower its train.global_batch "
              "or raise the budget",
          size_t(bytes));
    }
  }
}

}  // namespace wt
