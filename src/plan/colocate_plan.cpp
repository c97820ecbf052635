#include "plan/colocate_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "plan/byte_pairing.hpp"
#include "sched/job_placement.hpp"

namespace wt {

std::vector<size_t> group_ends(const std::vector<Instruction>& stream,
                               const std::vector<NodeGroup>& groups) {
  std::vector<size_t> ends;
  if (groups.empty()) return ends;
  const int nodes = groups.back().pass_end / 2;
  int pass = 0;  // the step's passes run in order: forward 0 .. n-1, backward n-1 .. 0
  for (size_t i = 0; i < stream.size() && ends.size() < groups.size(); ++i) {
    const Instruction& ins = stream[i];
    if (!is_node_pass(ins)) continue;
    if ((ins.op == OpCode::Forward) != pass_forward(pass, nodes) ||
        ins.node_begin != pass_node(pass, nodes))
      throw std::invalid_argument("group_ends: " + ins.str() + " is not pass " +
                                  std::to_string(pass) + " of the step's node groups");
    if (++pass != groups[ends.size()].pass_end) continue;
    // The group's last pass: it ends before the next pass, or at the stream's end.
    size_t end = i + 1;
    while (end < stream.size() && !is_node_pass(stream[end])) ++end;
    ends.push_back(ends.size() + 1 == groups.size() ? stream.size() : end);
  }
  if (ends.size() != groups.size())
    throw std::invalid_argument("group_ends: the stream runs " + std::to_string(ends.size()) +
                                " of " + std::to_string(groups.size()) + " node groups");
  return ends;
}

Pairing pairing_named(const std::string& name) {
  if (name == "bytes") return Pairing::Bytes;
  if (name == "index") return Pairing::Index;
  throw std::invalid_argument("unknown pairing '" + name + "' (bytes or index)");
}

std::vector<JobBytes> job_bytes(const std::vector<ProfiledJob>& jobs,
                                const std::vector<std::vector<NodeGroup>>& groups) {
  std::vector<JobBytes> out;
  for (size_t j = 0; j < jobs.size(); ++j) {
    JobBytes job;
    job.resident = jobs[j].resident_bytes;
    for (const NodeGroup& g : groups[j]) job.groups.push_back({g.net, g.peak, g.allocating});
    out.push_back(std::move(job));
  }
  return out;
}

int64_t pairing_target(const std::vector<ProfiledJob>& jobs, int64_t memory_limit) {
  if (memory_limit <= 0) return 0;
  int64_t largest = 0;
  for (const ProfiledJob& job : jobs)
    for (const auto* phase : {&job.memory.forward, &job.memory.backward})
      for (const NodePhaseMemory& node : *phase) largest = std::max(largest, node.peak);
  return std::max<int64_t>(1, memory_limit - largest);
}

RoundPlan plan_round(const std::vector<ProfiledJob>& jobs, const RoundOptions& options,
                     int64_t split_bytes) {
  RoundPlan plan;
  plan.split_bytes = split_bytes;
  for (const ProfiledJob& job : jobs)
    plan.groups.push_back(node_groups(job.memory, split_bytes, options.partition));
  const std::vector<JobBytes> bytes = job_bytes(jobs, plan.groups);
  if (options.pairing == Pairing::Bytes) {
    plan.pairing = pair_by_bytes(bytes, pairing_target(jobs, options.memory_limit));
  } else {
    std::vector<ColocatedJobGroups> shapes;
    for (size_t j = 0; j < jobs.size(); ++j) {
      ColocatedJobGroups shape;
      shape.total = static_cast<int>(plan.groups[j].size());
      for (const NodeGroup& g : plan.groups[j])
        if (g.allocating) {
          ++shape.allocating;
          shape.allocating_bytes.push_back(g.net);
        }
      shape.peak_bytes = jobs[j].peak_bytes;
      shape.resident_bytes = jobs[j].resident_bytes;
      shapes.push_back(shape);
    }
    plan.pairing = pair_node_groups(shapes, options.memory_limit, split_bytes);
  }
  plan.memory = round_memory(bytes, plan.pairing);
  return plan;
}

}  // namespace wt
