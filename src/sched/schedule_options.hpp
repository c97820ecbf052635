#pragma once
// What the deck's [schedule] table tells a schedule generator (the deck's RunConfig::Schedule is
// this struct: the component owns its options, the deck only fills them in).
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

struct ScheduleOptions {
  std::string kind = "gang";       // gang | pipeline | waves | ticktock | burst
  int64_t bucket_bytes = 4 << 20;  // gradient allreduce bucket size (gang, burst)
  int64_t microbatches = 1;
  std::vector<int64_t> cuts;        // explicit stage cut points (node indices); empty = automatic
  std::string balance = "profile";  // automatic cuts balance: profile (measured time) | flops
  bool wave_offset = true;
  std::string gang_sync = "allreduce";  // gang: allreduce | master (ScaleDNN's baseline)
};

}  // namespace wt
