#pragma once
// Read-only views of a deck, for people: the layer table with its stage cut (--show-stages) and
// the schedule's instruction lists per rank and stream (--show-schedule). Nothing is trained.
#include <ostream>

#include "deck/run_config.hpp"

namespace wt {

// ranks: the world size the schedule's stage cut is shown for.
void show_stages(const RunConfig& config, int ranks, std::ostream& out);
void show_schedule(const RunConfig& config, int ranks, std::ostream& out);

}  // namespace wt
