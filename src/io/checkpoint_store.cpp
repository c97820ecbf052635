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

#include "util/input_error.hpp"

namespace wt {

namespace fs = std::filesystem;

namespace {

void fsync_path(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems refuse fsync on a directory; the rename is still atomic there.
  if (rc != 0 && !directory)
    throw std::runtime_error("cannot write " + path + " to disk (fsync): " + std::strerror(err));
}

void rename_durably(const std::string& from, const std::string& to, const std::string& dir) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw std::runtime_error("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
  fsync_path(dir, true);
}

// Writes `text` to `path` with write(2), checking every call (a stream would hide ENOSPC until
// close, and ofstream's close reports no reason).
void write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
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
  write_file(latest + ".tmp", fs::path(final_name).filename().string() + "\n");
  rename_durably(latest + ".tmp", latest, dir_);

  // Prune: keep the newest `keep` complete checkpoints and drop leftovers of crashed writes. A
  // removal that fails leaves a file too many, not a broken run: not an error.
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0 && name != "latest.tmp")
      fs::remove(entry.path(), ec);
    else if (int64_t s = step_of(name); s >= 0)
      found.emplace_back(s, entry.path());
  }
  std::sort(found.rbegin(), found.rend());
  for (size_t i = size_t(keep_); i < found.size(); ++i)
    if (found[i].first != step) fs::remove(found[i].second, ec);
}

void CheckpointStore::prepare(const std::string& deck_path) const {
  auto fail = [&](const std::string& what, int err) {
    throw InputError(deck_path, 0, "checkpoint.dir",
                     what + " " + dir_ + ": " + std::strerror(err) +
                         "; set checkpoint.dir (or the run directory) to a writable place");
  };
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail("cannot create the checkpoint directory", ec.value());
  if (!fs::is_directory(dir_, ec)) fail("the checkpoint directory", ENOTDIR);
  // Creating a file is the only honest test (access(2) says yes to root on most read-only mounts).
  const std::string probe = (fs::path(dir_) / ".write_test").string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("cannot create files in the checkpoint directory", errno);
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string CheckpointStore::latest_name() const {
  std::ifstream latest(fs::path(dir_) / "latest");
  std::string name;
  if (latest >> name && step_of(name) >= 0) return name;
  return "";
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
