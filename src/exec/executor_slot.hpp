#pragma once
// Private to the executor's source files: what one in-flight batch holds between its forward and
// its backward.
#include <vector>

#include "exec/executor.hpp"
#include "util/steady_seconds.hpp"

namespace wt {

// Everything one in-flight batch holds between its forward and its backward.
struct Executor::Slot {
  Slot(size_t nodes, size_t stages)
      : out(nodes),
        saved(nodes),
        grad(nodes),
        relaid_out(nodes),
        relaid_grad(nodes),
        stage_samples(stages) {}
  Tensor input;
  std::vector<int32_t> labels;
  std::vector<Tensor> out;   // per node output
  std::vector<Saved> saved;  // per node forward->backward state
  std::vector<Tensor> grad;  // per node: gradient of the loss w.r.t. its output
  Rng rng{0};                // the global batch's dropout generator
  int64_t first_sample = 0;  // the global index of the slot's first sample in its batch
  // Burst: a stage's input re-laid onto this rank's rows of the stage (RecvRows, CopyRows),
  // which the stage reads instead of `out` (a rank that also ran the previous stage still needs
  // its own rows of `out` for that stage's backward), and the gradient assembled there.
  std::vector<Tensor> relaid_out, relaid_grad;      // per node
  std::vector<std::vector<int64_t>> stage_samples;  // per stage: its rows' positions in the batch
  std::vector<int32_t> row_labels;   // the loss's labels read by runs of rows (burst)
  const int64_t* samples = nullptr;  // the running stage's row positions, else first_sample + row

  const Tensor& input_of(int src) const {
    return src == kGraphInput ? input : relaid_out[src].defined() ? relaid_out[src] : out[src];
  }
  Tensor& gradient_of(int src) { return relaid_out[src].defined() ? relaid_grad[src] : grad[src]; }
  const std::vector<int32_t>& loss_labels() const {
    return row_labels.empty() ? labels : row_labels;
  }
};

}  // namespace wt
