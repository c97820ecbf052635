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

// The fewest micro-batches (a divisor of global_batch, at most global_batch) that bring a node
// of longest_node_s seconds on the whole batch within tasklet_s, assuming time proportional to
// the batch; 1 when it fits already.
int64_t microbatches_to_fit(double longest_node_s, int64_t global_batch, double tasklet_s);

// The longest node of `deck`'s step on this device: a throwaway copy of the job (into
// `probe_dir`, removed afterwards) trains two steps, the second timed pass by pass. Throws what
// the job throws (an OutOfMemory under the background's budget).
double probe_longest_node(const RunConfig& deck, const JobOptions& options,
                          const std::string& probe_dir, DeviceContext& device, Communicator& self);

// `deck` trains its global batch as `microbatches` micro-batches (no change for 1).
void split_background_batch(RunConfig& deck, int64_t microbatches);

}  // namespace wt
