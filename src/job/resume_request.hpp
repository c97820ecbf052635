#pragma once
// What the command line and the deck ask of a resume: whether to resume at all, from which
// checkpoint, and what may be skipped on the way (job/checkpointer.hpp decides).
#include <string>

namespace wt {

struct ResumeRequest {
  bool wanted = false;       // --restart, --restart-from or checkpoint.restart = "auto"
  bool required = false;     // --restart: a checkpoint must exist
  std::string from;          // --restart-from FILE: this checkpoint, whichever run wrote it
  bool skip_locked = false;  // --skip-locked: a checkpoint locked by another process is skipped
                             // like a damaged one, instead of stopping the run
};

}  // namespace wt
