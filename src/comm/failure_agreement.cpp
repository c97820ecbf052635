#include "comm/failure_agreement.hpp"

#include <new>
#include <vector>

#include "mem/caching_allocator.hpp"
#include "util/agreed_error.hpp"
#include "util/input_error.hpp"

namespace wt {

int failure_status(const std::exception& e) {
  if (auto* agreed = dynamic_cast<const AgreedError*>(&e)) return agreed->status();
  if (dynamic_cast<const InputError*>(&e)) return 2;
  if (dynamic_cast<const OutOfMemory*>(&e) || dynamic_cast<const std::bad_alloc*>(&e)) return 3;
  return 1;
}

std::string failure_line(const std::exception& e, int world_rank) {
  if (dynamic_cast<const AgreedError*>(&e)) return e.what();
  const std::string rank = "wavetrain: rank " + std::to_string(world_rank) + ": ";
  switch (failure_status(e)) {
    case 2:
      return std::string("wavetrain: error: ") + e.what();
    case 3:
      if (dynamic_cast<const std::bad_alloc*>(&e))
        return rank + "out of host memory (std::bad_alloc)";
      return rank + e.what();
    default:
      return rank + "error: " + e.what();
  }
}

void agree_on_failure(Communicator& comm, const std::function<void()>& work) {
  int status = 0;
  std::string line;
  try {
    work();
  } catch (const std::exception& e) {
    status = failure_status(e);
    line = failure_line(e, comm.rank());
  }
  // Lowest failing rank: encode (failed ? rank : size) and take the minimum via a sum of one-hot
  // slots, which the Communicator offers; sizes here are small (one double per rank).
  std::vector<double> failed(size_t(comm.size()), 0.0);
  if (status != 0) failed[size_t(comm.rank())] = 1.0;
  comm.allreduce_sum(failed.data(), int64_t(failed.size()), 0);
  int first = -1;
  for (int r = 0; r < comm.size() && first < 0; ++r)
    if (failed[size_t(r)] > 0) first = r;
  if (first < 0) return;
  int64_t header[2] = {status, int64_t(line.size())};
  comm.broadcast_bytes(header, sizeof header, first);
  line.resize(size_t(header[1]));
  if (header[1] > 0) comm.broadcast_bytes(line.data(), header[1], first);
  throw AgreedError(int(header[0]), line);
}

}  // namespace wt
