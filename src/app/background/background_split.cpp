#include "app/background/background_split.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/background/instruction_times.hpp"
#include "job/job.hpp"

namespace wt {

double LongestNode::at(int64_t samples) const {
  if (batch <= 1 || one_sample_s <= 0) return whole_batch_s * double(samples) / double(batch);
  const double one = std::min(one_sample_s, whole_batch_s);  // a noisy probe: never above
  return one + (whole_batch_s - one) * double(samples - 1) / double(batch - 1);
}

int64_t microbatches_to_fit(const LongestNode& node, double bound_s) {
  for (int64_t m = 1; m < node.batch; ++m)
    if (node.batch % m == 0 && node.at(node.batch / m) <= bound_s) return m;
  return std::max<int64_t>(1, node.batch);
}

namespace {

constexpr int64_t kTimedSteps = 2;

// The longest pass of a copy of `deck`'s job, each pass at its fastest over kTimedSteps steps
// after the first (a stall of a loaded machine in one step would otherwise split the background
// too finely, or leave it out).
double time_longest_pass(const RunConfig& deck, const JobOptions& options, DeviceContext& device,
                         Communicator& self) {
  double longest = 0;
  Job probe(deck, options, device, 0, 1);
  probe.start(self);
  InstructionTimes times(probe.executor().rank_program());
  probe.executor().set_observer(&times);
  for (int64_t k = 0; k <= kTimedSteps && probe.start_step() + k < probe.total_steps(); ++k) {
    times.set_recording(k >= 1);  // the first step pays for warm-up allocations
    const int64_t step = probe.start_step() + k;
    probe.begin_step(step);
    CachingAllocator::JobScope account(device.allocator(), probe.id());
    probe.executor().issue_step();
    probe.finish_step(step);
  }
  probe.executor().set_observer(nullptr);
  const RankProgram& program = probe.executor().rank_program();
  const int stream = int(program.streams.size()) - 1;
  for (size_t i = 0; i < times.instructions(stream); ++i) {
    const OpCode op = program.streams[size_t(stream)][i].op;
    // Only the passes shrink with the micro-batch (an optimizer step does not).
    if (op == OpCode::Forward || op == OpCode::Backward)
      longest = std::max(longest, times.fastest_seconds(stream, i));
  }
  return longest;
}

}  // namespace

LongestNode probe_longest_node(const RunConfig& deck, const JobOptions& options,
                               const std::string& probe_dir, DeviceContext& device,
                               Communicator& self) {
  RunConfig probe_deck = deck;
  probe_deck.checkpoint.restart = "";  // a fresh copy: only its times matter
  JobOptions o = options;
  o.run_dir = probe_dir;
  LongestNode node;
  node.batch = deck.train.global_batch;
  std::error_code ignored;
  node.whole_batch_s = time_longest_pass(probe_deck, o, device, self);
  std::filesystem::remove_all(probe_dir, ignored);
  if (node.batch > 1) {  // one sample a micro-batch: the finest split
    split_background_batch(probe_deck, node.batch);
    node.one_sample_s = time_longest_pass(probe_deck, o, device, self);
    std::filesystem::remove_all(probe_dir, ignored);
  }
  return node;
}

void split_background_batch(RunConfig& deck, int64_t microbatches) {
  if (microbatches <= 1) return;
  deck.schedule.kind = "pipeline";  // one rank: one stage, its micro-batches in turn
  deck.schedule.microbatches = microbatches;
}

}  // namespace wt
