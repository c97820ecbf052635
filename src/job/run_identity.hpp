#pragma once
// A run's identity: made at its first start, kept in <run dir>/run_id, and written into every
// checkpoint the run writes (checkpoint attribute run_id), so that a resume can tell the run's own
// checkpoints from another run's when two decks share one checkpoint.dir. The identity belongs to
// the run directory, not to the deck: a deck changed between submissions is the same run.
//
// The id is "<UTC start time>-<16 random hex digits>", e.g. 20260112T093015Z-3fa9c2d1e4b5a6f7:
// unique without coordination, and it says when the run began.
#include <string>

namespace wt {

// The name of the file in the run directory.
constexpr const char* kRunIdFile = "run_id";

// Reads <run_dir>/run_id, or creates it when the run directory has none (the run's first start;
// also a run directory from a build that kept no identity). Local: rank 0, with the run directory
// locked. Throws InputError naming the file when it cannot be written, or holds no valid id.
// *created (when given) says whether this call made it.
std::string load_or_create_run_id(const std::string& run_dir, bool* created = nullptr);

// A fresh id (exposed for tests).
std::string new_run_id();

// Whether `id` has the form new_run_id() gives.
bool valid_run_id(const std::string& id);

}  // namespace wt
