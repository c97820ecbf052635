#pragma once
// Read-only views of a deck, for people: the layer table with its stage cut (--show-stages) and
// the schedule's instruction lists per rank and stream (--show-schedule). Nothing is trained.
#include <ostream>
#include <string>

#include "deck/run_config.hpp"

namespace wt {

// ranks: the world size the schedule's stage cut is shown for. run_dir: where a run of the deck
// caches its layer profile (profile.h5); when there is none, layers are profiled now and the
// profile is not written. show_stages prints per layer and per stage the forward+backward time,
// FLOPs, parameters and activation bytes, and the imbalance of the cut.
void show_stages(const RunConfig& config, int ranks, const std::string& run_dir, std::ostream& out);
void show_schedule(const RunConfig& config, int ranks, const std::string& run_dir,
                   std::ostream& out);

}  // namespace wt
