#include "io/trace_gather.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace wt {

namespace {

// Layout of one rank's message: rank, clock origin, three record counts, then the three record
// arrays.
struct Header {
  int64_t rank;
  int64_t clock_origin_ns;
  int64_t events;
  int64_t steps;
  int64_t memory;
};

template <typename T>
void append(std::vector<char>& out, const std::vector<T>& records) {
  const char* p = reinterpret_cast<const char*>(records.data());
  out.insert(out.end(), p, p + records.size() * sizeof(T));
}

template <typename T>
const char* extract(const char* p, int64_t count, std::vector<T>& records) {
  records.resize(count);
  std::memcpy(records.data(), p, count * sizeof(T));
  return p + count * sizeof(T);
}

std::vector<char> serialize(const RankTrace& t) {
  const Header h{t.rank, t.clock_origin_ns, int64_t(t.events.size()), int64_t(t.steps.size()),
                 int64_t(t.memory.size())};
  std::vector<char> out(reinterpret_cast<const char*>(&h),
                        reinterpret_cast<const char*>(&h) + sizeof h);
  append(out, t.events);
  append(out, t.steps);
  append(out, t.memory);
  return out;
}

RankTrace deserialize(const char* p) {
  Header h;
  std::memcpy(&h, p, sizeof h);
  p += sizeof h;
  RankTrace t;
  t.rank = static_cast<int>(h.rank);
  t.clock_origin_ns = h.clock_origin_ns;
  p = extract(p, h.events, t.events);
  p = extract(p, h.steps, t.steps);
  extract(p, h.memory, t.memory);
  return t;
}

}  // namespace

std::vector<RankTrace> gather_rank_traces(const RankTrace& mine, MPI_Comm comm, int root) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::vector<char> message = serialize(mine);
  // MPI counts are int: a trace beyond 2 GiB per rank is far outside what a step window is for.
  if (message.size() > size_t(std::numeric_limits<int>::max()))
    throw std::runtime_error("trace of rank " + std::to_string(rank) +
                             " exceeds 2 GiB: narrow the [trace] step window");
  const int bytes = static_cast<int>(message.size());
  std::vector<int> counts(rank == root ? size : 0), offsets(rank == root ? size : 0);
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::vector<char> all;
  if (rank == root) {
    int64_t total = 0;
    for (int r = 0; r < size; ++r) {
      if (total > std::numeric_limits<int>::max())
        throw std::runtime_error("gathered trace exceeds 2 GiB: narrow the [trace] step window");
      offsets[r] = static_cast<int>(total);
      total += counts[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(message.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
              root, comm);
  std::vector<RankTrace> traces;
  if (rank == root)
    for (int r = 0; r < size; ++r) traces.push_back(deserialize(all.data() + offsets[r]));
  return traces;
}

}  // namespace wt
