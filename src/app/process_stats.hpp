#pragma once
// Small measurements the run reports: elapsed seconds, the process's peak resident set, and a
// duration as the progress lines print it.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace wt {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline double peak_rss_mb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;  // Linux: kilobytes
}

// "2m31s", or "1h05m" from an hour on.
inline std::string format_duration(double s) {
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s / 3600), int(std::fmod(s, 3600) / 60));
  else
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s / 60), int(std::fmod(s, 60)));
  return buf;
}

}  // namespace wt
