#include "job/earlier_run.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "io/checkpoint_file.hpp"
#include "io/checkpoint_store.hpp"
#include "job/run_identity.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace fs = std::filesystem;

namespace {

// The rows of metrics.csv below its header (0 when there is no file).
long metric_rows(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  long lines = 0;
  while (std::getline(in, line))
    if (!line.empty()) ++lines;
  return lines > 0 ? lines - 1 : 0;
}

void remove_or_throw(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec)
    throw InputError(path.string(), 0, "",
                     "--overwrite cannot remove the earlier run's file: " + ec.message());
}

// Whether `inner` lies inside `outer` (both made absolute and normal).
bool inside(const fs::path& inner, const fs::path& outer) {
  const fs::path a = fs::absolute(inner).lexically_normal();
  const fs::path b = fs::absolute(outer).lexically_normal();
  const fs::path rel = a.lexically_relative(b);
  return !rel.empty() && *rel.begin() != "..";
}

std::string recorded_run_id(const fs::path& run_dir) {
  std::ifstream in(run_dir / kRunIdFile);
  std::string id;
  if (in >> id && valid_run_id(id)) return id;
  return "";
}

}  // namespace

std::string describe_earlier_run(const std::string& run_dir) {
  const fs::path dir(run_dir);
  std::error_code ec;
  const bool finished = fs::exists(dir / "summary.json", ec);
  const long rows = metric_rows(dir / "metrics.csv");
  if (!finished && rows == 0) return "";
  std::string what = finished ? "a finished run (summary.json" : "a started run (";
  if (rows > 0)
    what += std::string(finished ? ", " : "") + "metrics.csv with " + std::to_string(rows) +
            (rows == 1 ? " row" : " rows");
  return what + ")";
}

void refuse_earlier_run(const std::string& run_dir, const std::string& earlier) {
  throw InputError(run_dir, 0, "",
                   "the run directory holds " + earlier +
                       ", which this run would overwrite: resume it with --restart (from its "
                       "newest checkpoint), replace it with --overwrite (its metrics, summary, "
                       "log and checkpoints are removed), or choose another directory with "
                       "--run-dir DIR (or run.name / run.output_dir in the deck)");
}

std::string check_earlier_run(const std::string& run_dir, bool overwrite, bool resuming) {
  const std::string earlier = describe_earlier_run(run_dir);
  if (!earlier.empty() && !overwrite && !resuming) refuse_earlier_run(run_dir, earlier);
  return earlier;
}

void clear_earlier_run(const std::string& run_dir, const std::string& checkpoint_dir) {
  const fs::path dir(run_dir);
  for (const char* file : {"metrics.csv", "summary.json", "log.txt", "deck.toml", "tasklets.csv",
                           "auto.csv", "background"})
    remove_or_throw(dir / file);
  const std::string id = recorded_run_id(dir);
  const bool own_dir = inside(checkpoint_dir, dir);
  const CheckpointStore store(checkpoint_dir, 0);
  bool removed_latest = false;
  const std::string latest = store.latest_name();
  for (const std::string& path : store.candidates()) {
    bool ours = own_dir;
    if (!ours && !id.empty()) {
      try {
        ours = read_checkpoint_info(path).run_id == id;
      } catch (const std::exception&) {
        ours = false;  // unreadable, in a directory shared with other runs: not ours to remove
      }
    }
    if (!ours) continue;
    if (fs::path(path).filename() == latest) removed_latest = true;
    remove_or_throw(path);
  }
  if (removed_latest || (own_dir && latest.empty()))
    remove_or_throw(fs::path(checkpoint_dir) / "latest");
}

}  // namespace wt
