#pragma once
// Pairs one wave's backward with another wave's forward at node-group granularity, so that the
// forward never holds more new activation memory than the backward has already given back
// (Wavelet §3.2: the tock's forward fills the memory the tick's backward frees). Used by ticktock.
#include <cstdint>
#include <functional>
#include <vector>

namespace wt {

// The partition both tick-tock's overlap groups and Waterwave's node groups (plan/node_groups)
// are made of: items [0, n) cut into consecutive ranges by their bytes. After each item, the
// range so far closes when close(Cut) says so; the last range always ends at n. Returns the ends.
struct Cut {
  int64_t range_bytes = 0;  // the open range's bytes, this item included
  int64_t total_bytes = 0;  // every item's so far
  int closed = 0;           // ranges closed before this one
  int left = 0;             // items after this one
};
std::vector<int> cut_ranges(const std::vector<int64_t>& bytes,
                            const std::function<bool(const Cut&)>& close);

// Group g: the backward of nodes [backward_begin, backward_end) of one wave, then the forward of
// nodes [forward_begin, forward_end) of the other (possibly empty). Backward groups run from the
// last node down, forward groups from the first node up; each covers the nodes exactly once.
struct OverlapGroup {
  int backward_begin = 0, backward_end = 0;
  int forward_begin = 0, forward_end = 0;
};

// node_bytes[i]: activation bytes node first_node + i holds from its forward to its backward.
// The backward is cut into at most `groups` pieces freeing about equal bytes; forward group g ends
// at the last node whose cumulative bytes do not exceed what backward groups 0..g have freed.
std::vector<OverlapGroup> overlap_groups(const std::vector<int64_t>& node_bytes, int first_node,
                                         int groups);

}  // namespace wt
