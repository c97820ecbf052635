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
  static const Default defaults[] = {
      {"OMPI_MCA_coll_libnbc_ireduce_algorithm", "binomial"},
  };
  int set = 0;
  for (const Default& d : defaults)
    if (!std::getenv(d.name)) set += setenv(d.name, d.value, 0) == 0;
  return set;
}

}  // namespace wt
