#pragma once
// Runs a schedule's instruction lists against a cost model instead of tensors: the same Program
// the executor runs, priced by CostModel. Each rank has one compute engine (its streams'
// compute instructions take turns on it) and one link engine (its communication takes turns on
// it, beside compute unless the device says communication uses compute). A message starts when
// both ends have issued it and both links are free; a collective when every member has. Memory
// per rank: the parameters, gradients and optimizer state of every stage it steps, stage weights
// it receives by Broadcast from the issue until its Reduce completes, and the activations each
// forward keeps until the matching backward frees them.
#include <cstdint>
#include <vector>

#include "compress/weight_codec.hpp"
#include "pricing/cost_model.hpp"
#include "sched/instruction.hpp"

namespace wt {

struct SimulatedSpan {  // one instruction as the simulator ran it (traces, tests)
  int rank = 0, stream = 0;
  Instruction ins;
  double begin_s = 0, end_s = 0;
};

struct SimulatedMemory {
  int rank = 0;
  double t_s = 0;
  int64_t bytes = 0;  // in use on the rank from t_s on
};

struct SimResult {
  double step_s = 0;  // one step: from all ranks starting to the last instruction's end
  int64_t samples_per_step = 0;
  std::vector<double> compute_s;        // per rank: time its compute engine was busy
  std::vector<double> comm_s;           // per rank: time its link was busy
  std::vector<int64_t> peak_bytes;      // per rank
  std::vector<double> background_s;     // per rank: background compute (SimOptions::background)
  std::vector<SimulatedSpan> spans;     // only with record_spans
  std::vector<SimulatedMemory> memory;  // only with record_spans, in time order per rank

  double samples_per_s() const { return step_s > 0 ? double(samples_per_step) / step_s : 0; }
  double busy_fraction(int rank) const { return step_s > 0 ? compute_s[rank] / step_s : 0; }
};

struct SimOptions {
  int64_t global_batch = 0;  // samples per global batch (LoadBatch parts are shares of it)
  bool record_spans = false;
  // ScaleDNN's codec on stage broadcasts: the words travel (a third of the bytes for scalednn,
  // half for bf16; raw mode's side list, data dependent, is not priced), plus encoding on the
  // root and decoding on the members at memory bandwidth. Buffers travel exact.
  WeightCodec codec = {};
  // data.distribution = "scatter": bytes per sample (inputs and labels) rank 0 scatters; 0 =
  // every rank reads its own part (preloaded, free).
  int64_t scatter_bytes_per_sample = 0;
  // DeepPool multiplexing: a background job on every rank's compute engine, at the lowest
  // priority and never preempted. Tasklets of background_tasklet_s start only while the engine
  // has no foreground compute to run (and, with background_holds_for_allreduce, no collective of
  // the rank is in flight); a foreground compute that arrives during one waits for its end. Idle
  // time at the step's end is filled too, a tasklet running over it delaying the step. 0 = none.
  double background_tasklet_s = 0;
  bool background_holds_for_allreduce = true;
  // Co-located jobs (Program::jobs > 1, plan/colocated_program.hpp): job j's instructions priced
  // by job_costs[j] on job_batches[j] samples per global batch (empty: `costs` and global_batch
  // for every job). The memory counted is the cost models' analytic one; a co-located round's
  // peak by Waterwave's rules is plan/round_memory.hpp's.
  std::vector<const CostModel*> job_costs = {};
  std::vector<int64_t> job_batches = {};
  // Streams share the rank's compute engine only for the work part of each pass: its fixed part
  // (the device's launch_s per node: kernel launches, dispatch, small kernels' tails) leaves the
  // engine to another stream's work. The concurrency assumption of co-location's throughput.
  bool overlap_launch = false;
};

// Throws std::logic_error if the program deadlocks (validate_program rejects those first).
SimResult simulate(const Program& program, const CostModel& costs, const SimOptions& options);

}  // namespace wt
