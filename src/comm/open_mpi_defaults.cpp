#include "comm/open_mpi_defaults.hpp"

#include <cstdlib>

namespace wt {

int apply_open_mpi_defaults() {
  struct Default {
    const char* name;
    const char* value;
  };
  // libnbc picks its "chain" MPI_Ireduce for 2-4 ranks and messages over 64 kB: one schedule
  // round per 16 kB segment, and a round advances only inside an MPI_Test. The executor tests
  // between layers, so a stage's 1.6 MB gradient Reduce (waves) needed ~100 rounds and finished
  // only when the step's last Wait spun on it, after the backward it was meant to overlap
  // (measured: over 1000 MPI_Test calls by the computing rank for 2 MB, against 15-50 with the
  // binomial tree, which sends each message whole).
  // OMPIO's sharedfp "sm" component opens a named semaphore for every file opened in parallel
  // (/dev/shm/sem.OMPIO_<file name>), which wavetrain never uses (no shared file pointers). A
  // rank killed inside such an open (a job's time limit, the OOM killer) leaves it held, and
  // every later job on that node that opens a file of the same name hangs in MPI_File_open:
  // step_00000036.h5.tmp's checkpoint, say, in every run (seen in CI, 2026-11-28).
  static const Default defaults[] = {
      {"OMPI_MCA_coll_libnbc_ireduce_algorithm", "binomial"},
      {"OMPI_MCA_sharedfp", "^sm"},
  };
  int set = 0;
  for (const Default& d : defaults)
    if (!std::getenv(d.name)) set += setenv(d.name, d.value, 0) == 0;
  return set;
}

}  // namespace wt
