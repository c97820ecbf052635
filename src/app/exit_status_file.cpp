#include "app/exit_status_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace wt {

void record_exit_status(int status) {
  const char* path = std::getenv("WAVETRAIN_EXIT_STATUS_FILE");
  if (!path || !*path) return;
  const std::string tmp = std::string(path) + ".tmp." + std::to_string(getpid());
  const std::string text = std::to_string(status) + "\n";
  const char* step = "write";
  FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f && std::fputs(text.c_str(), f) >= 0;
  if (f) ok = (std::fclose(f) == 0) && ok;
  if (ok) {
    step = "rename";
    ok = std::rename(tmp.c_str(), path) == 0;
  }
  if (!ok) {
    std::fprintf(stderr, "wavetrain: warning: cannot %s WAVETRAIN_EXIT_STATUS_FILE %s: %s\n", step,
                 path, std::strerror(errno));
    std::remove(tmp.c_str());
  }
}

}  // namespace wt
