#pragma once
// schedule.kind = "auto": every candidate (app/auto/auto_candidates.hpp) generated for the run's
// ranks and priced by the simulator on one device model, ranked by predicted samples/s among
// those that fit the memory limit; the ranking is what auto.csv holds and --show-auto prints.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "app/auto/auto_candidates.hpp"
#include "model/graph.hpp"
#include "pricing/device_model.hpp"
#include "pricing/layer_profile.hpp"

namespace wt {

struct RankedCandidate {
  int index = 0;  // into the candidate list
  std::string name;
  std::string overrides;  // --set keys that train it by name
  bool lossy = false;
  std::string impossible;        // why it cannot run on these ranks ("" = it can)
  double step_s = 0;             // predicted
  double samples_per_s = 0;      // predicted: what the ranking orders by (waves runs more samples
  int64_t samples_per_step = 0;  // per step than gang: steps are not comparable)
  int64_t peak_bytes = 0;        // predicted peak of the fullest rank
  bool fits = false;             // peak_bytes within the memory limit (no limit: true)
  double measured_step_s = 0;    // auto.measure: the real step's median; 0 = not measured
  double measured_samples_per_s() const {
    return measured_step_s > 0 ? double(samples_per_step) / measured_step_s : 0;
  }
};

struct AutoRanking {
  std::vector<RankedCandidate> rows;  // fitting ones by samples/s, fastest first; then the rest
  int ranks = 0;
  std::string device;        // the device model's name
  int64_t memory_limit = 0;  // bytes per rank; 0 = none
  double memory_margin = 1;  // auto.memory_margin: predicted peaks are multiplied by it
  std::string layer_times;   // "measured profile" or "roofline"
};

AutoRanking rank_auto_candidates(const std::vector<AutoCandidate>& candidates, const Graph& graph,
                                 const DeviceModel& device, const LayerProfile* profile, int ranks,
                                 int64_t memory_limit, double memory_margin);

// The row auto trains: measured rows by their measurement, else the first that fits (and is not
// lossy unless lossy_allowed). -1 when nothing fits.
int auto_pick(const AutoRanking& ranking, bool lossy_allowed);

// One line for the run log: what auto chose and why (the runner-up, what did not fit).
std::string auto_reason(const AutoRanking& ranking, int pick);

// auto.csv: candidate, predicted step, samples/s, peak memory, fits (and the measurement, when
// there is one); written whole or not at all.
void write_auto_csv(const std::string& path, const AutoRanking& ranking);
void print_auto_ranking(std::ostream& out, const AutoRanking& ranking, int pick);

}  // namespace wt
