#pragma once
// Turning one rank's failure into the whole job's, without a hang.
//
// agree_on_failure(comm, work) runs `work` on every rank. `work` must make no collective call
// (it is local: reading files, checking input, creating the run directory on rank 0), so every
// rank reaches the agreement that follows whether or not its own work threw. If it threw on any
// rank, every rank throws the same AgreedError, carrying the status and message of the lowest
// failing rank, and main() exits with that status on every rank, cleanly.
//
// failure_status / failure_line give the exit status and the printed line for any exception,
// the one mapping used by the agreement and by main()'s abort path alike.
#include <exception>
#include <functional>
#include <string>

#include "comm/communicator.hpp"

namespace wt {

// 2 InputError, 3 OutOfMemory (also std::bad_alloc), AgreedError's own status, 1 otherwise.
int failure_status(const std::exception& e);
// "wavetrain: error: ..." for bad input (no rank: every rank would say the same),
// "wavetrain: rank R: ..." otherwise.
std::string failure_line(const std::exception& e, int world_rank);

void agree_on_failure(Communicator& comm, const std::function<void()>& work);

}  // namespace wt
