#pragma once
// Runs a whole Model forward (and backward) on one batch the way the executor runs one local
// stage, without schedules, data sources or communication: for whole-model tests.
#include <vector>

#include "model/graph_pass.hpp"
#include "test_memory.hpp"

namespace wt::testing {

// The plain whole-model reference (model/graph_pass.hpp): the batch's mean loss; with `backward`
// the parameter gradients accumulate into the model's flat gradient buffers.
inline double run_model(Model& m, const Tensor& x, const std::vector<int32_t>& labels,
                        bool backward, Mode mode = Mode::Train, uint64_t rng_seed = 1) {
  return run_graph_pass(m, wt::testing::device().ops(), x, labels, backward, mode, rng_seed);
}

}  // namespace wt::testing
