#pragma once
// Which model stages one rank holds, derived from its instructions alone (Wavelet §3.3 "Memory":
// a rank holds the stages it owns, plus the ones it computes on right now, not the whole model).
//
//   Held     the rank Steps the stage (it owns the master copy and the optimizer state), or the
//            program uses it in a way that fits no rule below: values and grads live all run.
//   Borrowed the rank never Steps it but receives it by Broadcast from another rank (root !=
//            this rank) before every Forward/Backward on it, all on one stream. Its values live
//            from a Broadcast into it until the last Forward/Backward before the next Broadcast
//            into it (or the end of the step); its grads from the first Backward (or Reduce) on
//            it until this rank's Reduce of them (root != this rank) has completed.
//   Unused   the rank's program never names the stage (pipeline: the other ranks' stages): it
//            holds no storage for it.
//
// Nothing here knows a schedule by name: gang and ticktock step every stage (all Held), pipeline
// steps its own (the rest Unused), waves steps its own and borrows the rest.
#include <vector>

#include "sched/instruction.hpp"

namespace wt {

enum class Residency { Held, Borrowed, Unused };

struct ResidencyPlan {
  std::vector<std::vector<Residency>> stages;  // [replica][stage]
  // [stream][instruction]: this Forward/Backward is the last read of its (borrowed) stage's
  // values before the next Broadcast into it; release them once it has run.
  std::vector<std::vector<char>> release_values_after;
};

ResidencyPlan plan_residency(const Program& program, int rank, int stage_count);

// Per stage, the world ranks that Step it, ascending (the lowest is its owner: checkpoints and
// evaluation take its copy; burst's count is how many there are).
std::vector<std::vector<int>> stage_steppers(const Program& program, int stage_count);
// Whether every rank of the program steps every stage (gang, ticktock): then every rank holds
// every stage's summed gradient and judges it alike.
bool every_rank_steps_every_stage(const Program& program, int stage_count);

}  // namespace wt
