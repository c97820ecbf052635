#pragma once
// A program run abstractly with unit-time compute: every Forward and Backward takes one cycle,
// everything else none, messages and collectives arrive as soon as all their ends are issued. The
// cycle an instruction is issued in is what --show-schedule prints, so a person can check a
// schedule's pattern (Wavelet's Figure 10, torchgpipe's clock cycles) by eye.
#include <vector>

#include "sched/instruction.hpp"

namespace wt {

struct CycleTable {
  // cycle[rank][stream][instruction]: the cycle it is issued in; a Forward or Backward runs
  // during that cycle. -1 where the program never gets there (a deadlock).
  std::vector<std::vector<std::vector<int>>> cycle;
  int cycles = 0;  // cycles until the last stream finishes
};

CycleTable assign_cycles(const Program& program);

}  // namespace wt
