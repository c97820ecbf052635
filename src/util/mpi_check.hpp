#pragma once
// The one check for MPI return codes: WT_MPI_CHECK(MPI_Comm_dup(world, &dup)) throws
// std::runtime_error naming the call, the file and line, and MPI's own error string.
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace wt {

inline void mpi_check(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + std::string(text, size_t(length)));
}

// An element count as MPI's int, or an error past 2^31 - 1 (MPI's counts are ints).
inline int mpi_count(int64_t count) {
  if (count > INT_MAX) throw std::runtime_error("message larger than 2^31 elements");
  return static_cast<int>(count);
}

}  // namespace wt

#define WT_MPI_CHECK(call) ::wt::mpi_check((call), #call, __FILE__, __LINE__)
