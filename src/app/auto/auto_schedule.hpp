#pragma once
// schedule.kind = "auto": the simulator chooses the schedule. Before training, rank 0 profiles
// the model at every batch size the candidates run at, measures the link between ranks, prices
// every candidate (app/auto/auto_ranking.hpp) on this run's ranks and memory limit, writes the
// ranking to <run dir>/auto.csv, logs one line on what it chose and why, and broadcasts the
// choice. With auto.measure the top three also run a few real steps each (app/auto/
// auto_measure.hpp) and the fastest measured one trains. A resumed run keeps the choice its
// checkpoint trained with.
#include <ostream>
#include <string>

#include "comm/communicator.hpp"
#include "deck/run_config.hpp"
#include "device/device_context.hpp"
#include "job/job.hpp"

namespace wt {

// The deck with auto's choice in place of "auto". Collective. Throws (agreed on every rank)
// InputError for a deck no candidate can run, OutOfMemory (exit 3) when none fits the memory
// limit, after printing the ranking with each candidate's need.
RunConfig resolve_auto_schedule(const RunConfig& deck, const JobOptions& options,
                                Communicator& comm, DeviceContext& device);

// Where no run happens (--show-auto, --simulate, --show-plan): the ranking on a device model
// (`profile`: a profile.h5 of measured layer times, or "" for the roofline).
struct AutoModelRequest {
  int ranks = 1;
  std::string device;
  std::string profile;
};
// Prints the ranking and the choice. Throws InputError when no candidate can run on the ranks.
void show_auto(const RunConfig& deck, const AutoModelRequest& request, std::ostream& out);
// The deck with the choice auto makes on that device model in place of "auto" (printing one
// line on it to `out`). Throws InputError / OutOfMemory as resolve_auto_schedule.
RunConfig auto_choice_on_model(const RunConfig& deck, const AutoModelRequest& request,
                               std::ostream& out);

}  // namespace wt
