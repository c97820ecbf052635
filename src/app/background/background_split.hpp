#pragma once
// policy = "foreground_first": a background whose longest node is longer than a tasklet would
// either stall the foreground (the node runs over the foreground's wait: DeepPool) or never
// start (no idle slot is that long). It trains instead on micro-batches: its global batch cut so
// each node fits background.tasklet_ms, gradients accumulated over them before its one optimizer
// step, which is the same model as the unsplit batch up to the order of a float sum. On one rank
// that is the pipeline schedule's one-stage program with M microbatches.
#include <cstdint>
#include <string>

#include "deck/run_config.hpp"

namespace wt {

class Communicator;
class DeviceContext;
struct JobOptions;

// The background's longest pass (a node's forward or backward) against the samples in its
// micro-batch: timed on the whole batch and on one sample, linear in between. A pass does not
// shrink in proportion to its batch (a one-sample lenet pass runs at about a third of its
// batch-8 rate): its launches and its weights' reads stay.
struct LongestNode {
  double whole_batch_s = 0;  // 0: not timed
  double one_sample_s = 0;   // 0: not timed (then proportional to the batch)
  int64_t batch = 1;         // the whole batch
  double at(int64_t samples) const;
};

// The fewest micro-batches (a divisor of the batch, at most the batch) whose longest node fits
// bound_s; the batch (one sample each) when none does.
int64_t microbatches_to_fit(const LongestNode& node, double bound_s);

// The longest node of `deck`'s step on this device, on its whole batch and on one sample: a
// throwaway copy of the job (into `probe_dir`, removed afterwards) trains three steps each way,
// the last two timed pass by pass (each pass at its fastest). Throws what the job throws (an
// OutOfMemory under the background's budget).
LongestNode probe_longest_node(const RunConfig& deck, const JobOptions& options,
                               const std::string& probe_dir, DeviceContext& device,
                               Communicator& self);

// `deck` trains its global batch as `microbatches` micro-batches (no change for 1).
void split_background_batch(RunConfig& deck, int64_t microbatches);

}  // namespace wt
