#pragma once
// printf-style formatting of one number (and of a byte count or a duration) into a std::string, for
// the tables the inspection commands print (--show-stages, --simulate).
#include <cstdio>
#include <string>

namespace wt {

inline std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// "12.3 MiB", "1.5 GiB".
inline std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return format_number(u == 0 ? "%.0f" : "%.1f", b) + " " + units[u];
}

// "1.234 s", "12.34 ms", "56.7 us".
inline std::string human_seconds(double s) {
  if (s >= 1) return format_number("%.3f s", s);
  if (s >= 1e-3) return format_number("%.2f ms", s * 1e3);
  return format_number("%.1f us", s * 1e6);
}

}  // namespace wt
