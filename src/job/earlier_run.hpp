#pragma once
// A run directory holds one run. A new run into a directory that holds an earlier one (its
// summary.json, or metrics.csv with at least one row) would write over it, so it must say what
// it means: resume it (--restart, --restart-from FILE or checkpoint.restart = "auto"), replace it
// (--overwrite), or go elsewhere (--run-dir). Without one of those the run is refused (exit 2)
// before anything is written into the directory. Rank 0 only, with the run directory locked.
#include <string>

namespace wt {

// What the directory holds of an earlier run, e.g. "a finished run (summary.json; metrics.csv
// with 12 rows)"; "" when nothing worth keeping (a run that stopped before its first step).
std::string describe_earlier_run(const std::string& run_dir);

// The refusal: an InputError naming the directory, what it holds and every way on.
[[noreturn]] void refuse_earlier_run(const std::string& run_dir, const std::string& earlier);

// What a new run does first: describe_earlier_run, and refuse_earlier_run unless the run
// replaces it (`overwrite`) or resumes it (`resuming`). Returns the description ("" none).
std::string check_earlier_run(const std::string& run_dir, bool overwrite, bool resuming);

// --overwrite: removes the earlier run's files from run_dir (metrics.csv, summary.json, log.txt,
// deck.toml, tasklets.csv, auto.csv, background/) and, from checkpoint_dir, the checkpoints that
// run wrote (every one when checkpoint_dir lies inside run_dir; in a checkpoint.dir outside it,
// those carrying the run_id recorded in run_dir), with `latest` when it named one of them. The
// run's identity (run_id) stays: it belongs to the directory. Throws InputError naming a file
// that cannot be removed.
void clear_earlier_run(const std::string& run_dir, const std::string& checkpoint_dir);

}  // namespace wt
