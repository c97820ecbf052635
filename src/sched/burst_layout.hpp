#pragma once
// Which samples of a global batch each rank holds for a burst segment, and the rows that move
// when the next segment runs on a different number of ranks: DeepPool's "sticky" layout
// (research notes §1.3, jobDescription.py computeXfers). One pure function, shared by the burst
// generator, the simulator and the tests.
//
// The first segment takes contiguous blocks in rank order (the data source's parts). At a change
// to g ranks (ranks 0..g-1, B/g samples each), every sample, in ascending order, stays on its rank
// if that rank runs the new segment and has room; else it goes where the previous sample went, if
// that rank has room; else to the lowest rank with room. Each rank's samples stay sorted, so a run
// of consecutive samples between one pair of ranks is one contiguous block of rows at both ends.
#include <cstdint>
#include <vector>

namespace wt {

struct SampleLayout {
  // samples[r]: the global sample indices rank r holds, ascending; one list per rank running
  // the segment.
  std::vector<std::vector<int64_t>> samples;
  int ranks() const { return static_cast<int>(samples.size()); }
};

// The first segment's layout: rank r of `ranks` holds samples [r*B/g, (r+1)*B/g). Throws
// std::invalid_argument unless `ranks` divides `batch`.
SampleLayout contiguous_layout(int64_t batch, int ranks);

// The layout on `ranks` ranks that follows `from` by the sticky rule.
SampleLayout sticky_layout(const SampleLayout& from, int ranks);

// A maximal run of consecutive samples moving from one rank to another (or staying: a local
// copy when from_rank == to_rank and the layouts differ in row positions, or nothing to do when
// the rows are where they were).
struct RowRun {
  int from_rank = 0, to_rank = 0;
  int64_t first_sample = 0, count = 0;
  int64_t from_row = 0;  // the run's first row in from_rank's rows
  int64_t to_row = 0;    // ... and in to_rank's rows
};

// Every sample's move from `from` to `to`, as runs in ascending sample order.
std::vector<RowRun> layout_transfers(const SampleLayout& from, const SampleLayout& to);

}  // namespace wt
