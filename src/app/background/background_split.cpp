#include "app/background/background_split.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/background/instruction_times.hpp"
#include "job/job.hpp"

namespace wt {

int64_t microbatches_to_fit(double longest_node_s, int64_t global_batch, double tasklet_s) {
  for (int64_t m = 1; m < global_batch; ++m)
    if (global_batch % m == 0 && longest_node_s / double(m) <= tasklet_s) return m;
  return std::max<int64_t>(1, global_batch);
}

double probe_longest_node(const RunConfig& deck, const JobOptions& options,
                          const std::string& probe_dir, DeviceContext& device, Communicator& self) {
  RunConfig probe_deck = deck;
  probe_deck.checkpoint.restart = "";  // a fresh copy: only its times matter
  JobOptions o = options;
  o.run_dir = probe_dir;
  double longest = 0;
  {
    Job probe(probe_deck, o, device, 0, 1);
    probe.start(self);
    InstructionTimes times(probe.executor().rank_program());
    probe.executor().set_observer(&times);
    for (int64_t k = 0; k < 2 && probe.start_step() + k < probe.total_steps(); ++k) {
      times.set_recording(k == 1);  // the first step pays for warm-up allocations
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
        longest = std::max(longest, times.solo_seconds(stream, i));
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(probe_dir, ignored);
  return longest;
}

void split_background_batch(RunConfig& deck, int64_t microbatches) {
  if (microbatches <= 1) return;
  deck.schedule.kind = "pipeline";  // one rank: one stage, its micro-batches in turn
  deck.schedule.microbatches = microbatches;
}

}  // namespace wt
