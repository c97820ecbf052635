#include "io/checkpoint_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace wt {

namespace fs = std::filesystem;

namespace {

void fsync_path(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  ::close(fd);
  // Some file systems refuse fsync on a directory; the rename is still atomic there.
  if (rc != 0 && !directory)
    throw std::runtime_error("fsync " + path + ": " + std::strerror(errno));
}

void rename_durably(const std::string& from, const std::string& to, const std::string& dir) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw std::runtime_error("rename " + from + " -> " + to + ": " + std::strerror(errno));
  fsync_path(dir, true);
}

// step of "step_00000040.h5", or -1.
int64_t step_of(const std::string& name) {
  long long step = -1;
  char tail[4] = {0};
  if (name.size() == 16 && std::sscanf(name.c_str(), "step_%8lld.%2s", &step, tail) == 2 &&
      std::string(tail) == "h5")
    return step;
  return -1;
}

}  // namespace

CheckpointStore::CheckpointStore(std::string dir, int64_t keep)
    : dir_(std::move(dir)), keep_(keep) {}

std::string CheckpointStore::final_path(int64_t step) const {
  char name[32];
  std::snprintf(name, sizeof name, "step_%08lld.h5", (long long)step);
  return (fs::path(dir_) / name).string();
}

std::string CheckpointStore::temp_path(int64_t step) const { return final_path(step) + ".tmp"; }

void CheckpointStore::commit(int64_t step) const {
  const std::string final_name = final_path(step);
  fsync_path(temp_path(step), false);
  rename_durably(temp_path(step), final_name, dir_);

  const std::string latest = (fs::path(dir_) / "latest").string();
  {
    std::ofstream out(latest + ".tmp", std::ios::trunc);
    out << fs::path(final_name).filename().string() << "\n";
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + latest + ".tmp");
  }
  fsync_path(latest + ".tmp", false);
  rename_durably(latest + ".tmp", latest, dir_);

  // Prune: keep the newest `keep` complete checkpoints and drop leftovers of crashed writes.
  std::vector<std::pair<int64_t, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 && name != "latest.tmp")
      fs::remove(entry.path());
    else if (int64_t s = step_of(name); s >= 0)
      found.emplace_back(s, entry.path());
  }
  std::sort(found.rbegin(), found.rend());
  for (size_t i = size_t(keep_); i < found.size(); ++i)
    if (found[i].first != step) fs::remove(found[i].second);
}

std::vector<std::string> CheckpointStore::candidates() const {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  std::ifstream latest(fs::path(dir_) / "latest");
  std::string name;
  if (latest >> name && step_of(name) >= 0 && fs::exists(fs::path(dir_) / name))
    out.push_back((fs::path(dir_) / name).string());
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string n = entry.path().filename().string();
    if (int64_t s = step_of(n); s >= 0) found.emplace_back(s, entry.path().string());
  }
  std::sort(found.rbegin(), found.rend());
  for (const auto& [s, path] : found)
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  return out;
}

}  // namespace wt
