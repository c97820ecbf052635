#pragma once
// printf-style formatting of one number into a std::string, for the tables the inspection
// commands print (--show-stages, --simulate).
#include <cstdio>
#include <string>

namespace wt {

inline std::string format_number(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace wt
