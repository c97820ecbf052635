#pragma once
// DeepPool's burst-parallel planner (seeds/deeppool.txt §4.1, Alg. 1 "Search Linear"): for a
// chain of planning units, how many ranks run each unit so the step is fastest, within a
// tolerance for wasted device time (the GPU-second amplification limit). A pure function of a
// cost table (pricing/burst_cost_table.hpp): the costs come from a profile or a device model
// (pricing/burst_costs.hpp), the tests build them by hand.
//
// The dynamic program, literally as the paper writes it (research notes §1.2):
//   S[0][g] = 0; Amp(0, h) = 1                      (unit 0 is the data)
//   for unit i, count g: over predecessors h in ascending order,
//     cand = S[i-1][h] + comm(i, h -> g)
//     admitted if Amp(i-1, h) <= max(bestAmp, limit) and cand <= bestS;
//     then bestS = cand, bestT = comm, bestAmp = min(bestAmp, Amp(i-1, h)), pred = h
//   S[i][g] = bestS + comp(i, g) + sync(i, g);  T[i][g] = bestT + comp(i, g) + sync(i, g)
//   Amp(i, g) = T[i][g] * g / (comp(i, 1) + sync(i, 1)), or 1 when that is <= amp_exempt_s
// The limit is soft (a predecessor over it is still admitted when no more amplified than every
// one admitted so far), checked on the predecessor only (the last unit is never checked), and
// depends on the ascending order of h. DeepPool's code differs slightly (strict <, bestAmp set
// to the newest amplification, not the minimum): BurstOptions::admission picks either.
//
// Two refinements, both optional in the cost table:
// - Per layer: a unit can list its layers' own times; the amplification test then runs on every
//   layer (each exempt under amp_exempt_s on one rank, as DeepPool's code exempts a layer under
//   300 us) and the unit's amplification is its worst layer's, so a conv plus its ReLU is not
//   limited where neither would be alone.
// - Per segment: a segment_sync function prices the gradient sync of a run of units on one count
//   as the executor runs it (buckets over the whole segment, overlapped with its backward). A
//   unit's sync is then what it adds to its segment on the path being priced (the segment's sync
//   with the unit minus without it), so a plan's sync sums to its segments' and `sync` is
//   ignored. The DP stays over units; the segment a path is in is carried along it.
#include <cstdint>
#include <string>
#include <vector>

#include "pricing/burst_cost_table.hpp"

namespace wt {

struct BurstOptions {
  double amp_limit = 2.0;        // burst.amp_limit (DeepPool's code's default)
  double amp_exempt_s = 300e-6;  // burst.amp_exempt_s: layers this fast are never limited
  // Paper: Alg. 1 as printed (<=, bestAmp the minimum admitted). DeepPoolCode: its planner at
  // commit cf496d7 (searchLinear: strict <, bestAmp the newest admitted amplification).
  enum class Admission { Paper, DeepPoolCode };
  Admission admission = Admission::Paper;
};

// The planner's admission rule that goes with a cost model (burst.cost_model).
BurstOptions::Admission burst_admission(const std::string& cost_model);

// One unit of the chosen plan, as DeepPool prints it.
struct BurstUnitPlan {
  int count = 1;             // ranks running the unit
  double comp_s = 0;         // forward + backward at global_batch / count samples per rank
  double comm_s = 0;         // moving its input rows in (and their gradients back)
  double sync_s = 0;         // allreducing its gradients over its ranks
  double cumulative_s = 0;   // the step so far, through this unit
  double amplification = 1;  // GPU-seconds over the single-rank time (1 if exempt)
};

struct BurstPlan {
  std::vector<BurstUnitPlan> units;
  double step_s = 0;  // predicted step time: the units' times
  // BurstCosts::optimizer_step_s: step_s + this is the simulator's step for the plan.
  double optimizer_step_s = 0;
  double gpu_seconds = 0;  // sum over units of count * (comp + comm + sync)
  // Per rank (0..max count - 1): seconds of the step it runs nothing. Ranks beyond the widest
  // unit are idle all step and not listed.
  std::vector<double> idle_s;
  // Maximal runs of units with equal counts: [first unit, last unit + 1) and the count.
  struct Segment {
    int unit_begin, unit_end, count;
  };
  std::vector<Segment> segments() const;
};

// Throws std::invalid_argument on an inconsistent cost table (empty, sizes that disagree,
// counts not ascending and positive).
BurstPlan plan_burst(const BurstCosts& costs, const BurstOptions& options);

// The plan that runs unit u on unit_counts[u] ranks (a forced plan: burst.ranks), priced as the
// planner prices its own. Throws std::invalid_argument for a count that is not a candidate or a
// list of the wrong length.
BurstPlan price_burst_plan(const BurstCosts& costs, const BurstOptions& options,
                           const std::vector<int>& unit_counts);

// The plan's table (per unit: count, comp, comm, sync, cumulative time, amplification), with
// unit names when given.
std::string burst_plan_table(const BurstPlan& plan, const std::vector<std::string>& unit_names);

}  // namespace wt
