#pragma once
// Pieces of the checkpoint format shared by its writer (checkpoint_writer.cpp) and its reader
// (checkpoint_file.cpp). Internal to src/io.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/checkpoint_file.hpp"

namespace wt::checkpoint_format {

constexpr const char* kFormat = "wavetrain-checkpoint";
// 3: the writing run's identity (run_id, run_dir), covered by the header checksum.
// 2: root attributes covered by `header_checksum`, optimizer step counts by `step_count_checksum`
//    (no run identity: resumed with a warning, job/checkpointer.hpp).
// 1: neither (read with a warning: its header cannot be verified).
constexpr int64_t kVersion = 3;
constexpr int64_t kOldestReadable = 1;

inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Checksum of every root attribute that steers a resume, as written: a canonical text of each
// name and value, so that a changed value, a renamed or a dropped attribute all change it.
inline uint64_t header_checksum(const CheckpointInfo& h, int64_t version, int64_t stages) {
  std::string text =
      std::string("format=") + kFormat + "\nversion=" + std::to_string(version) +
      "\nstep=" + std::to_string(h.step) + "\nglobal_batch=" + std::to_string(h.global_batch) +
      "\nbatches_per_epoch=" + std::to_string(h.batches_per_epoch) +
      "\nworld_size=" + std::to_string(h.world_size) + "\nseed=" + std::to_string(h.seed) +
      "\nschedule=" + h.schedule + "\nmodel=" + h.model + "\noptimizer=" + h.optimizer +
      "\nstages=" + std::to_string(stages) + "\nreplicas=" + std::to_string(h.replicas) + "\ncuts=";
  for (int64_t c : h.cuts) text += std::to_string(c) + ",";
  if (!h.stage_ranks.empty()) {  // burst's plan (absent in files of the other schedules)
    text += "\nstage_ranks=";
    for (int64_t g : h.stage_ranks) text += std::to_string(g) + ",";
  }
  if (version >= 3) text += "\nrun_id=" + h.run_id + "\nrun_dir=" + h.run_dir;
  return fnv1a(text.data(), text.size());
}

inline uint64_t step_count_checksum(int64_t steps) { return fnv1a(&steps, sizeof steps); }

}  // namespace wt::checkpoint_format
