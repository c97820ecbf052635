#pragma once
// --show-schedule and --simulate of a co-location deck ([colocate] decks, app/colocated_training):
// each job's step is profiled node by node as a run profiles it (its two solo steps on the host at
// its batch per rank, in a scratch directory removed afterwards), cut and paired as the run would
// under the deck's budget (plan/split_choice.hpp), and the round is shown pair by pair per
// stream, validated as one program (plan/colocated_program.hpp), and priced by the simulator
// beside temporal sharing (the jobs' whole steps in turn) on a device model. Its memory is
// predicted by the round's rules (plan/round_memory.hpp), the ones the pairing keeps.
#include <ostream>

#include "app/simulate_command.hpp"
#include "deck/run_config.hpp"

namespace wt {

void show_colocated_schedule(const RunConfig& config, int ranks, std::ostream& out);
void simulate_colocated(const RunConfig& config, const SimulateRequest& request, std::ostream& out);

}  // namespace wt
