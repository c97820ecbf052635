#include "plan/colocate_pairing.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace wt {

namespace {

// Places groups on the two streams, each after its job's last slot unless as printed.
class Placer {
 public:
  Placer(int jobs, bool as_printed) : last_slot_(size_t(jobs), -1), as_printed_(as_printed) {}

  // Puts (job, group) at `index` of `stream`, or later when the job's last slot is not before it;
  // returns the index used.
  int place(std::vector<PairSlot>& stream, int index, int job, int group) {
    if (!as_printed_) index = std::max(index, last_slot_[size_t(job)] + 1);
    if (stream.size() <= size_t(index)) stream.resize(size_t(index) + 1);
    if (!stream[size_t(index)].hole())
      throw std::logic_error("pair_node_groups: two node groups placed in one slot");
    stream[size_t(index)] = PairSlot{job, group};
    last_slot_[size_t(job)] = std::max(last_slot_[size_t(job)], index);
    return index;
  }

 private:
  std::vector<int> last_slot_;
  bool as_printed_;
};

int second_job_beside_first(const std::vector<ColocatedJobGroups>& jobs,
                            const std::vector<int>& order, int64_t memory_limit,
                            int64_t split_bytes) {
  if (order.size() < 2) return 0;
  const ColocatedJobGroups& first = jobs[size_t(order[0])];
  const ColocatedJobGroups& second = jobs[size_t(order[1])];
  int64_t room = (memory_limit - first.peak_bytes) / split_bytes - 1;
  if (memory_limit == 0) {
    room = second.allocating;
  } else if (!second.allocating_bytes.empty()) {
    int64_t free_bytes = memory_limit - first.peak_bytes - second.resident_bytes;
    room = -1;  // the last that fits is left out: the headroom of one group
    for (int64_t bytes : second.allocating_bytes) {
      if (bytes > free_bytes) break;
      free_bytes -= bytes;
      ++room;
    }
  }
  // Beside the first job's ANGs: no more than it has (the printed algorithm would index before
  // the stream's start when the first job has fewer), nor more than the second job has.
  const int64_t most = std::min(second.allocating, first.allocating);
  return static_cast<int>(std::clamp<int64_t>(room, 0, most));
}

}  // namespace

ColocatePairing pair_node_groups(const std::vector<ColocatedJobGroups>& jobs, int64_t memory_limit,
                                 int64_t split_bytes, bool as_printed) {
  if (split_bytes <= 0) throw std::invalid_argument("pair_node_groups: split_bytes must be > 0");
  for (const auto& job : jobs)
    if (job.total <= 0 || job.allocating < 0 || job.allocating > job.total)
      throw std::invalid_argument("pair_node_groups: a job needs groups, its ANGs first");
  ColocatePairing out;
  std::vector<int> counts;
  for (const auto& job : jobs) counts.push_back(job.total);
  out.job_order = jobs_by_group_count(counts);
  if (jobs.empty()) return out;
  const int first_angs = jobs[size_t(out.job_order[0])].allocating;
  const int p = second_job_beside_first(jobs, out.job_order, memory_limit, split_bytes);
  out.second_job_in_dv = p;
  Placer placer(static_cast<int>(jobs.size()), as_printed);
  int offset = first_angs - p, idx1 = 0, idx2 = first_angs;
  const size_t last = jobs.size() - 1;
  for (size_t q = 0; q < jobs.size(); ++q) {
    const int job = out.job_order[q];
    const ColocatedJobGroups& groups = jobs[size_t(job)];
    int i = 0;
    if (q == 1)
      for (; i < p; ++i) offset = placer.place(out.dv, offset, job, i) + 1;
    for (; i < groups.allocating; ++i) idx1 = placer.place(out.av, idx1, job, i) + 1;
    for (; i < groups.total; ++i) {
      if (q == last && idx2 > idx1)
        idx1 = placer.place(out.av, idx1, job, i) + 1;
      else
        idx2 = placer.place(out.dv, idx2, job, i) + 1;
    }
  }
  const size_t length = std::max(out.av.size(), out.dv.size());
  out.av.resize(length);
  out.dv.resize(length);
  return out;
}

std::vector<int> jobs_by_group_count(const std::vector<int>& group_counts) {
  std::vector<int> order(group_counts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return group_counts[size_t(a)] > group_counts[size_t(b)]; });
  return order;
}

std::string describe_stream(const std::vector<PairSlot>& stream) {
  std::string text;
  for (const PairSlot& slot : stream) {
    if (!text.empty()) text += ' ';
    text += slot.hole()
                ? std::string("-")
                : "J" + std::to_string(slot.job + 1) + "NG" + std::to_string(slot.group + 1);
  }
  return text;
}

int job_out_of_order(const ColocatePairing& pairing, int jobs) {
  std::vector<std::vector<int>> slot_of_group(static_cast<size_t>(jobs));
  for (const auto* stream : {&pairing.av, &pairing.dv})
    for (size_t k = 0; k < stream->size(); ++k) {
      const PairSlot& slot = (*stream)[k];
      if (slot.hole()) continue;
      auto& slots = slot_of_group[size_t(slot.job)];
      if (slots.size() <= size_t(slot.group)) slots.resize(size_t(slot.group) + 1, -1);
      slots[size_t(slot.group)] = static_cast<int>(k);
    }
  for (int job = 0; job < jobs; ++job) {
    const auto& slots = slot_of_group[size_t(job)];
    for (size_t g = 0; g < slots.size(); ++g)
      if (slots[g] < 0 || (g > 0 && slots[g] <= slots[g - 1])) return job;
  }
  return -1;
}

}  // namespace wt
