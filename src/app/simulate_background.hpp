#pragma once
// `--simulate` of a deck with [background]: DeepPool's multiplexing priced at any scale. The
// background deck's step on one rank is simulated alone (its samples per second of compute);
// then the foreground's step with a background tasklet engine on every rank (sim/simulator.hpp:
// lowest priority, no preemption, held during the rank's collectives); and, for the paper's
// Fig. 10 axes, the static partition: the foreground on one rank fewer beside the background
// alone on the last.
#include <functional>
#include <ostream>

#include "deck/run_config.hpp"
#include "job/simulated_run.hpp"

namespace wt {

// at_ranks(n): the foreground's run generated for n ranks.
void print_simulated_background(const RunConfig& config, const DeviceModel& device,
                                const SimulatedRun& run, const SimResult& alone,
                                const std::function<SimulatedRun(int)>& at_ranks,
                                std::ostream& out);

}  // namespace wt
