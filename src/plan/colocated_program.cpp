#include "plan/colocated_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "plan/colocate_plan.hpp"
#include "sched/opcode_traits.hpp"

namespace wt {

namespace {

// A job's one stream on a rank (on_stream leaves the streams before it empty).
const std::vector<Instruction>& job_stream(const Program& job, int rank) {
  const auto& streams = job.ranks.at(size_t(rank)).streams;
  for (const auto& stream : streams)
    if (!stream.empty()) return stream;
  if (streams.empty()) throw std::invalid_argument("colocated_program: a rank without a stream");
  return streams.back();
}

struct Offsets {
  int slot = 0, event = 0, group = 0;
};

Instruction renumbered(Instruction ins, int job, const Offsets& at) {
  ins.job = job;
  if (ins.slot >= 0) ins.slot += at.slot;
  if (ins.event >= 0) ins.event += at.event;
  if (is_collective(ins.op)) ins.group += at.group;
  return ins;
}

}  // namespace

Program colocated_program(const std::vector<Program>& jobs,
                          const std::vector<std::vector<NodeGroup>>& groups,
                          const ColocatePairing& pairing, const std::vector<int>& streams) {
  if (jobs.empty() || groups.size() != jobs.size() || streams.size() != jobs.size())
    throw std::invalid_argument("colocated_program: one program, group list and stream per job");
  Program out;
  out.schedule = "colocate";
  out.world_size = jobs.front().world_size;
  out.jobs = static_cast<int>(jobs.size());
  out.slots = out.events = 0;
  out.groups = {jobs.front().groups.at(0)};
  std::vector<Offsets> offsets;
  for (const Program& job : jobs) {
    if (job.world_size != out.world_size)
      throw std::invalid_argument("colocated_program: jobs of different world sizes");
    offsets.push_back({out.slots, out.events, static_cast<int>(out.groups.size())});
    out.slots += job.slots;
    out.events += job.events;
    out.groups.insert(out.groups.end(), job.groups.begin(), job.groups.end());
    out.global_batches = std::max(out.global_batches, job.global_batches);
    out.replicas = std::max(out.replicas, job.replicas);
  }
  const int stream_count = 1 + std::max(1, *std::max_element(streams.begin(), streams.end()));
  const int barriers = std::max(0, pairing.pairs() - 1);
  const int first_barrier_event = out.events;
  out.events += stream_count * barriers;
  for (int r = 0; r < out.world_size; ++r) {
    RankProgram rank;
    rank.streams.resize(size_t(stream_count));
    std::vector<std::vector<size_t>> ends;
    for (size_t j = 0; j < jobs.size(); ++j)
      ends.push_back(group_ends(job_stream(jobs[j], r), groups[j]));
    for (int k = 0; k < pairing.pairs(); ++k) {
      for (const PairSlot& slot : {pairing.av[size_t(k)], pairing.dv[size_t(k)]}) {
        if (slot.hole()) continue;
        const auto& from = job_stream(jobs[size_t(slot.job)], r);
        const auto& job_ends = ends[size_t(slot.job)];
        const size_t begin = slot.group == 0 ? 0 : job_ends.at(size_t(slot.group) - 1);
        auto& to = rank.streams[size_t(streams[size_t(slot.job)])];
        for (size_t i = begin; i < job_ends.at(size_t(slot.group)); ++i)
          to.push_back(renumbered(from[i], slot.job, offsets[size_t(slot.job)]));
      }
      if (k + 1 == pairing.pairs()) continue;
      // The boundary: every stream records, then waits for the others' records.
      const int event = first_barrier_event + stream_count * k;
      for (int s = 0; s < stream_count; ++s) {
        Instruction record{OpCode::Record};
        record.event = event + s;
        rank.streams[size_t(s)].push_back(record);
      }
      for (int s = 0; s < stream_count; ++s)
        for (int other = 0; other < stream_count; ++other) {
          if (other == s) continue;
          Instruction wait{OpCode::Wait};
          wait.event = event + other;
          rank.streams[size_t(s)].push_back(wait);
        }
    }
    out.ranks.push_back(std::move(rank));
  }
  return out;
}

}  // namespace wt
