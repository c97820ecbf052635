#pragma once
// Private to the executor's source files: what one in-flight batch holds between its forward and
// its backward.
#include <vector>

#include "exec/executor.hpp"

namespace wt {

// Everything one in-flight batch holds between its forward and its backward.
struct Executor::Slot {
  Tensor input;
  std::vector<int32_t> labels;
  std::vector<Tensor> out;   // per node output
  std::vector<Saved> saved;  // per node forward->backward state
  std::vector<Tensor> grad;  // per node: gradient of the loss w.r.t. its output
  Rng rng{0};                // the global batch's dropout generator
  int64_t first_sample = 0;  // the global index of the slot's first sample in its batch
};

}  // namespace wt
