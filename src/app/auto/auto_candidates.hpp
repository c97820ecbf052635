#pragma once
// schedule.kind = "auto": the schedules and settings auto chooses among, each a complete deck
// (the user's, with the [schedule], [burst] and [compress] choices filled in). The list is a pure
// function of the deck and the rank count, so every rank builds the same one and an index names a
// candidate across the job.
#include <string>
#include <vector>

#include "deck/run_config.hpp"

namespace wt {

struct AutoCandidate {
  std::string name;    // e.g. "pipeline, microbatches 4"; one word per setting, no commas in CSV
  RunConfig config;    // the deck with this candidate's schedule
  bool lossy = false;  // trains a different model (the weight codec): chosen only if allowed
};

// gang (bucket sizes 1, 4, 16 MiB), pipeline (microbatches 1, 2, 4, 8 that divide the global
// batch), waves, ticktock, burst (amplification limits 1.5, 2, 4) and waves with ScaleDNN's
// codec. On one rank only gang: every other schedule needs a second rank to differ.
std::vector<AutoCandidate> auto_candidates(const RunConfig& deck, int ranks);

// All that auto changes in a deck: what a run records and a resumed run keeps.
struct ScheduleChoice {
  char kind[16] = {};   // schedule.kind
  char codec[16] = {};  // compress.weights
  int64_t microbatches = 1;
  int64_t bucket_bytes = 0;
  double amp_limit = 0;
};
ScheduleChoice schedule_choice(const RunConfig& config);
RunConfig with_schedule_choice(RunConfig deck, const ScheduleChoice& choice);
// The choice a checkpoint's resolved deck (CheckpointInfo::deck_toml) trained with. Throws
// InputError naming `path` when the text has no schedule.
ScheduleChoice schedule_choice_in(const std::string& deck_toml, const std::string& path);
// "schedule.kind=pipeline schedule.microbatches=4": the --set overrides that train it by name.
std::string overrides(const ScheduleChoice& choice);
// "pipeline, microbatches 4": the candidate's name.
std::string describe(const ScheduleChoice& choice);

}  // namespace wt
