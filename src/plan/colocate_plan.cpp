#include "plan/colocate_plan.hpp"

#include <stdexcept>
#include <string>

#include "sched/job_placement.hpp"

namespace wt {

std::vector<size_t> group_ends(const std::vector<Instruction>& stream,
                               const std::vector<NodeGroup>& groups) {
  std::vector<size_t> ends;
  size_t g = 0;
  for (size_t i = 0; i < stream.size() && g < groups.size(); ++i) {
    const Instruction& ins = stream[i];
    if (!is_node_pass(ins)) continue;
    const NodeGroup& group = groups[g];
    const bool forward = ins.op == OpCode::Forward;
    if (forward != group.forward || ins.node_begin < group.node_begin ||
        ins.node_begin >= group.node_end)
      throw std::invalid_argument("group_ends: " + ins.str() + " is not in node group " +
                                  std::to_string(g));
    const int last = group.forward ? group.node_end - 1 : group.node_begin;
    if (ins.node_begin != last) continue;
    // The group's last pass: it ends before the next pass, or at the stream's end.
    size_t end = i + 1;
    while (end < stream.size() && stream[end].op != OpCode::Forward &&
           stream[end].op != OpCode::Backward)
      ++end;
    ends.push_back(g + 1 == groups.size() ? stream.size() : end);
    ++g;
  }
  if (ends.size() != groups.size())
    throw std::invalid_argument("group_ends: the stream runs " + std::to_string(ends.size()) +
                                " of " + std::to_string(groups.size()) + " node groups");
  return ends;
}

ColocatePairing pair_jobs(const std::vector<ColocatedJob>& jobs, int64_t memory_limit,
                          int64_t split_bytes) {
  std::vector<ColocatedJobGroups> shapes;
  for (const ColocatedJob& job : jobs) {
    ColocatedJobGroups shape;
    shape.total = static_cast<int>(job.groups.size());
    for (const NodeGroup& g : job.groups)
      if (g.forward) {
        ++shape.allocating;
        shape.allocating_bytes.push_back(g.net);
      }
    shape.peak_bytes = job.peak_bytes;
    shape.resident_bytes = job.resident_bytes;
    shapes.push_back(shape);
  }
  return pair_node_groups(shapes, memory_limit, split_bytes);
}

}  // namespace wt
