#pragma once
// Waterwave co-location (issue 20): the jobs of the decks that [colocate] decks lists, trained
// together on this deck's device, under its one memory budget, in paired rounds
// (app/paired_rounds.hpp). Each job writes <run dir>/<its run.name>/ (metrics, checkpoints, log),
// and its console lines start with "[<run.name>] ". The job decks and what this deck's keys do to
// them: app/colocation_decks.hpp. On several ranks each rank co-locates its own jobs (their
// schedules are data parallel across the ranks); distributed co-location is the paper's future
// work.
#include "app/trainer.hpp"
#include "comm/communicator.hpp"
#include "deck/run_config.hpp"

namespace wt {

TrainResult train_colocated(const RunConfig& config, const TrainOptions& options,
                            Communicator& comm);

}  // namespace wt
