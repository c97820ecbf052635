#pragma once
// Rank 0's console output, mirrored into <run dir>/log.txt. Other ranks stay quiet.
#include <cstdio>
#include <string>

namespace wt {

class RunLog {
 public:
  RunLog(bool is_root, bool quiet) : root_(is_root), quiet_(quiet) {}
  ~RunLog() {
    if (file_) std::fclose(file_);
  }
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;
  void open(const std::string& path) {
    if (root_) file_ = std::fopen(path.c_str(), "a");
  }
  // printf-style; one line, newline added.
  template <typename... Args>
  void line(const char* fmt, Args... args) {
    if (!root_) return;
    char buf[1024];
    std::snprintf(buf, sizeof buf, fmt, args...);
    if (!quiet_) {
      std::printf("%s\n", buf);
      std::fflush(stdout);
    }
    if (file_) {
      std::fprintf(file_, "%s\n", buf);
      std::fflush(file_);
    }
  }
  bool is_root() const { return root_; }

 private:
  bool root_;
  bool quiet_;
  std::FILE* file_ = nullptr;
};

}  // namespace wt
