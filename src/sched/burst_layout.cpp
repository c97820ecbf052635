#include "sched/burst_layout.hpp"

#include <stdexcept>
#include <string>

namespace wt {

namespace {

int64_t batch_of(const SampleLayout& layout) {
  int64_t n = 0;
  for (const auto& s : layout.samples) n += static_cast<int64_t>(s.size());
  return n;
}

void check_divides(int64_t batch, int ranks) {
  if (ranks < 1 || batch % ranks != 0)
    throw std::invalid_argument("a global batch of " + std::to_string(batch) +
                                " samples cannot be split evenly over " + std::to_string(ranks) +
                                " ranks");
}

// Where each sample is: owner[i] and its row there.
struct Placement {
  std::vector<int> owner;
  std::vector<int64_t> row;
};

Placement place(const SampleLayout& layout) {
  const int64_t batch = batch_of(layout);
  Placement p{std::vector<int>(size_t(batch), -1), std::vector<int64_t>(size_t(batch), -1)};
  for (int r = 0; r < layout.ranks(); ++r)
    for (size_t k = 0; k < layout.samples[size_t(r)].size(); ++k) {
      const int64_t i = layout.samples[size_t(r)][k];
      if (i < 0 || i >= batch || p.owner[size_t(i)] >= 0)
        throw std::invalid_argument("a sample layout must hold each sample exactly once");
      p.owner[size_t(i)] = r;
      p.row[size_t(i)] = static_cast<int64_t>(k);
    }
  return p;
}

}  // namespace

SampleLayout contiguous_layout(int64_t batch, int ranks) {
  check_divides(batch, ranks);
  SampleLayout layout;
  layout.samples.resize(size_t(ranks));
  const int64_t each = batch / ranks;
  for (int64_t i = 0; i < batch; ++i) layout.samples[size_t(i / each)].push_back(i);
  return layout;
}

SampleLayout sticky_layout(const SampleLayout& from, int ranks) {
  const int64_t batch = batch_of(from);
  check_divides(batch, ranks);
  const int64_t room = batch / ranks;
  const Placement was = place(from);
  SampleLayout to;
  to.samples.resize(size_t(ranks));
  auto has_room = [&](int r) { return int64_t(to.samples[size_t(r)].size()) < room; };
  int previous = -1;  // where the previous sample went
  for (int64_t i = 0; i < batch; ++i) {
    int r = was.owner[size_t(i)];
    if (r >= ranks || !has_room(r)) {
      r = previous;
      if (r < 0 || !has_room(r)) {
        r = 0;
        while (!has_room(r)) ++r;
      }
    }
    to.samples[size_t(r)].push_back(i);  // ascending i: every list stays sorted
    previous = r;
  }
  return to;
}

std::vector<RowRun> layout_transfers(const SampleLayout& from, const SampleLayout& to) {
  const Placement a = place(from), b = place(to);
  if (a.owner.size() != b.owner.size()) throw std::invalid_argument("layouts of different batches");
  std::vector<RowRun> runs;
  for (int64_t i = 0; i < static_cast<int64_t>(a.owner.size()); ++i) {
    const int src = a.owner[size_t(i)], dst = b.owner[size_t(i)];
    if (!runs.empty()) {
      RowRun& last = runs.back();
      if (last.from_rank == src && last.to_rank == dst && last.first_sample + last.count == i) {
        ++last.count;
        continue;
      }
    }
    runs.push_back({src, dst, i, 1, a.row[size_t(i)], b.row[size_t(i)]});
  }
  return runs;
}

}  // namespace wt
