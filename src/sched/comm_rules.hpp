#pragma once
// The matching and completion rules of the communication library a program will run under.
namespace wt {

enum class CommRules {
  // MPI (host ranks): non-blocking operations progress independently; point-to-point messages
  // match in order per (sender, receiver, tag); collectives match in order per communicator.
  Mpi,
  // NCCL (GPU ranks): an operation occupies its stream until it completes, one rank's operations
  // complete in the order it issued them, and point-to-point messages match in order per
  // (sender, receiver) pair: NCCL has no tags.
  Nccl,
};

inline const char* comm_rules_name(CommRules rules) {
  return rules == CommRules::Nccl ? "NCCL" : "MPI";
}

}  // namespace wt
