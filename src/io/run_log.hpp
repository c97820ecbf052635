#pragma once
// Rank 0's console output, mirrored into <run dir>/log.txt. Other ranks stay quiet.
// --quiet drops progress lines (line()) only: warnings and the final result are always printed.
// A log line that cannot be written to log.txt throws, naming the file and the reason.
#include <cstdio>
#include <string>
#include <utility>

#include "io/checked_file.hpp"

namespace wt {

class RunLog {
 public:
  RunLog(bool is_root, bool quiet) : root_(is_root), quiet_(quiet) {}
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;
  void open(const std::string& path) {
    if (root_) file_ = CheckedFile(path, "a");
  }
  // printf-style; one line, newline added. Progress and information: not under --quiet.
  template <typename... Args>
  void line(const char* fmt, Args... args) {
    emit(stdout, !quiet_, format(fmt, args...));
  }
  // "wavetrain: warning: ..." on stderr, also under --quiet.
  template <typename... Args>
  void warning(const char* fmt, Args... args) {
    emit(stderr, true, "wavetrain: warning: " + format(fmt, args...));
  }
  // The run's outcome (done, stopped with a checkpoint): also under --quiet.
  template <typename... Args>
  void result(const char* fmt, Args... args) {
    emit(stdout, true, format(fmt, args...));
  }
  bool is_root() const { return root_; }
  // Console lines start with it ("[lr_0.01] "): co-located jobs share one console. The log file
  // is the job's own and stays unprefixed.
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  const std::string& prefix() const { return prefix_; }

 private:
  template <typename... Args>
  static std::string format(const char* fmt, Args... args) {
    char buf[1024];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
  }
  void emit(std::FILE* console, bool show, const std::string& text) {
    if (!root_) return;
    if (show) {
      std::fprintf(console, "%s%s\n", prefix_.c_str(), text.c_str());
      std::fflush(console);
    }
    if (file_.is_open()) file_.write(text + "\n");
  }

  bool root_;
  bool quiet_;
  std::string prefix_;
  CheckedFile file_;
};

}  // namespace wt
