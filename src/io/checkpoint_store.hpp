#pragma once
// The checkpoint directory of a run: step_<NNNNNNNN>.h5 files, a `latest` file naming the newest
// complete one, and the crash-safety protocol around them. A checkpoint is written to
// `<name>.tmp`, fsync'd, renamed into place, the directory fsync'd, and only then is `latest`
// replaced the same way; old checkpoints beyond `keep` are removed last. A crash at any point
// leaves the previous checkpoint and a `latest` that names a complete file.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

class CheckpointStore {
 public:
  CheckpointStore(std::string dir, int64_t keep);

  const std::string& dir() const { return dir_; }
  std::string final_path(int64_t step) const;  // dir/step_00000040.h5
  std::string temp_path(int64_t step) const;   // final_path + ".tmp"

  // Creates the directory if needed and checks that files can be created in it. Local (no MPI);
  // throws InputError naming the directory, the key checkpoint.dir and the system's reason.
  void prepare(const std::string& deck_path) const;

  // Rank 0 only, after the collective write of temp_path(step) has closed the file: makes it
  // durable, renames it into place, points `latest` at it and prunes old checkpoints. Throws
  // std::runtime_error naming the file and the system's reason when any of it fails; `latest`
  // then still names the previous checkpoint (it is replaced last, atomically).
  void commit(int64_t step) const;

  // The file `latest` names ("" when there is none). Local.
  std::string latest_name() const;

  // Paths to try when resuming, best first: the one `latest` names, then every other complete
  // checkpoint by decreasing step. Empty when there is none.
  std::vector<std::string> candidates() const;

 private:
  std::string dir_;
  int64_t keep_;
};

}  // namespace wt
