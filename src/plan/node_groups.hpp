#pragma once
// Waterwave's node groups (§4.3): a job's step cut into consecutive groups by memory, so that
// co-located jobs' peaks can take turns (plan/byte_pairing.hpp pairs them). A step runs its node
// passes in one order: the forward from the first node to the last (allocating: activations kept
// for the backward), then the backward from the last node to the first (deallocating). A group
// is a range of those passes. Three partitions (research/seeds-next.md §3.4, in the executor's
// order, which is the model file's, rather than the paper's BFS depth):
//   split: each phase cut where a group's net allocation reaches split_bytes in size, with a
//     forced cut at the forward/backward turn; a node whose bytes reach the split alone is a group
//     of its own (`oversized`), so that it never drags its neighbours past the split;
//   peak:  Waterwave-s (§5.1): two groups, cut after the pass at which the step's memory peaks;
//   turn:  Waterwave-s's other cut: two groups, the forward and the backward (Wavelet's).
// The groups before the cut that ends the allocating phase (the turn; the peak for `peak`) are
// the job's ANGs, the rest its DNGs. The optimizer's Step joins the last group. Cut with
// sched/overlap_groups' cut_ranges, as tick-tock's overlap groups are.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

// One node's forward or backward, as the allocator saw it in a solo profiling step: the change in
// bytes in use across it, and its transient peak above the bytes in use when it began.
struct NodePhaseMemory {
  int64_t net = 0;
  int64_t peak = 0;
};

struct NodeMemoryProfile {
  std::vector<NodePhaseMemory> forward;   // by node
  std::vector<NodePhaseMemory> backward;  // by node (run last to first)
  int nodes() const { return static_cast<int>(forward.size()); }
};

// The node of pass `pass` (0 .. 2n-1) of a step of n nodes, and whether it is a forward.
inline int pass_node(int pass, int nodes) { return pass < nodes ? pass : 2 * nodes - 1 - pass; }
inline bool pass_forward(int pass, int nodes) { return pass < nodes; }

// The profile's passes in step order: forward 0 .. n-1, then backward n-1 .. 0.
std::vector<NodePhaseMemory> step_passes(const NodeMemoryProfile& profile);

struct NodeGroup {
  int pass_begin = 0;      // passes [pass_begin, pass_end) in step order (pass_node names the
  int pass_end = 0;        // node): a group may span the turn (`peak`)
  bool allocating = true;  // one of the job's ANGs, else a DNG
  int64_t net = 0;         // the group's net allocation
  int64_t peak = 0;        // its transient peak above the bytes in use when it begins
  bool steps = false;      // the optimizer's Step runs at its end (the last group)
  bool oversized = false;  // one node that reaches the split alone: a group of its own
};

enum class Partition { Split, Peak, Turn };
// "split", "peak", "turn" (the deck's colocate.partition); throws std::invalid_argument otherwise.
Partition partition_named(const std::string& name);

// split_bytes > 0 (read only by Split). A profile with no nodes, or forward and backward of
// different lengths, throws std::invalid_argument.
std::vector<NodeGroup> node_groups(const NodeMemoryProfile& profile, int64_t split_bytes,
                                   Partition partition = Partition::Split);

// "F0-3 +12.0 MB | F4 +51.9 MB! | F5-6 B6-5 +8.0 MB | B4-0 -11.0 MB step" for --show-schedule
// and logs (nodes in run order; `!`: a node over the split, a group of its own).
std::string describe_group(const NodeGroup& group, int nodes);
std::string describe_groups(const std::vector<NodeGroup>& groups, int nodes);

}  // namespace wt
