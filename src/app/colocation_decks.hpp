#pragma once
// A co-location deck ([colocate] decks = [...]) resolved into its jobs' decks, by one rule:
//
//   - the co-location deck's own keys are run.name, run.output_dir, [colocate] and [device]: where
//     the jobs' run directories go and the one device they share (a job deck's [device] is not
//     read);
//   - every other key it sets, in its file or by --set, is set in every job's deck over the job's
//     own value, as if each job deck said it; an error about it names where it was set;
//   - each job deck is then checked like any deck, and must train a model itself: no [colocate]
//     of its own (so neither a co-location deck nor the deck that lists it), a named schedule
//     (not "auto"), a run.name of its own, and on several ranks a data-parallel schedule (gang):
//     each rank pairs its jobs by its own memory profile, so jobs whose ranks run different
//     programs (pipeline, waves, burst) would reach their transfers and collectives in a
//     different order on each rank;
//   - the jobs share the rank's one stall watchdog: their failure.stall_seconds must agree.
// Every error is an InputError naming a file, line and key.
#include <string>
#include <vector>

#include "deck/run_config.hpp"

namespace wt {

struct ColocatedJobDecks {
  std::vector<RunConfig> decks;       // in [colocate] decks order
  std::vector<std::string> run_dirs;  // <run_dir>/<each job's run.name>
};

// `ranks`: the ranks every job runs on.
ColocatedJobDecks colocated_job_decks(const RunConfig& colocation, const std::string& run_dir,
                                      int ranks);

// failure.stall_seconds for the rank's watchdog: the deck's own, or a co-location deck's jobs'.
double watchdog_stall_seconds(const RunConfig& deck, int ranks);

// Throws InputError (naming the deck's [colocate] decks) when `deck` is a co-location deck where
// `use` (e.g. "--check-data --deck") needs a deck that trains a model itself.
void require_job_deck(const RunConfig& deck, const std::string& use);

}  // namespace wt
