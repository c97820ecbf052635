#include "comm/shared_window.hpp"

#include <sys/resource.h>

#include "util/mpi_check.hpp"

namespace wt {

namespace {
// Open MPI's bookkeeping in the window's backing file, beyond the ranks' segments.
constexpr double kWindowFileSlack = 1 << 20;
}  // namespace

bool shared_window_fits(MPI_Comm comm, double window_bytes) {
  struct rlimit limit {};
  double allowed = ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                       ? double(limit.rlim_cur)
                       : 1e300;
  WT_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &allowed, 1, MPI_DOUBLE, MPI_MIN, comm));
  return window_bytes + kWindowFileSlack <= allowed;
}

void free_shared_window(MPI_Win& win) {
  if (win == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
}

}  // namespace wt
