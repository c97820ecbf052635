#pragma once
// auto.measure: the top predicted candidates each train a few real steps on this run's ranks
// (in <run dir>/auto_measure/, removed afterwards), so that auto keeps the fastest measured one
// and auto.csv sets each prediction against its measurement.
#include <cstdint>
#include <string>
#include <vector>

#include "app/auto/auto_candidates.hpp"
#include "app/auto/auto_ranking.hpp"
#include "comm/communicator.hpp"
#include "device/device_context.hpp"
#include "io/run_log.hpp"

namespace wt {

// The candidate indices of the `n` fastest rows that fit (and are not lossy unless allowed).
std::vector<int64_t> top_candidates(const AutoRanking& ranking, bool lossy_allowed, int n);

// Collective: every rank trains each listed candidate for auto.measure_steps steps after one
// warm-up step. Returns the median step seconds of each, as rank 0 measured them (0: not
// measured). A stop signal on any rank ends the trial in hand after its step and skips the rest.
std::vector<double> measure_candidates(const std::vector<AutoCandidate>& list,
                                       const std::vector<int64_t>& indices, const RunConfig& deck,
                                       const std::string& run_dir, Communicator& comm,
                                       DeviceContext& device, RunLog& log);

// Puts the medians into the ranking's rows (measured_step_s).
void record_measurements(AutoRanking& ranking, const std::vector<int64_t>& indices,
                         const std::vector<double>& medians);

}  // namespace wt
