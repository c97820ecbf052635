#pragma once
// A failure on one rank ends the whole job at once, with its real message.
//
// main() catches only the errors that every rank raises together (AgreedError, Diverged). Any
// other exception finds no handler, and under the Itanium C++ ABI (GCC, Clang) the runtime then
// calls std::terminate before unwinding anything: no destructor runs, so none can enter a
// collective (an MPI_Wait on a pending receive, MPI_Win_free, a collective H5Fclose) that the
// other ranks, still waiting in the step's collective, would never join. The terminate handler
// installed here prints the message to stderr and to <run dir>/log.txt, marks this rank failed on
// the node's heartbeat board (so its peers' stall watchdogs stay silent instead of blaming it) and
// calls MPI_Abort with the error's exit status. A job of one rank exits with the status directly,
// without Open MPI's abort banner.
//
// The handler can take no argument, so what it needs lives in one record in job_failure.cpp,
// filled in by main() and the trainer through the functions below.
#include <exception>
#include <string>

namespace wt {

class HeartbeatBoard;
class Job;

// Before anything can throw: world rank and size come from MPI_Init.
void install_job_failure_handler(int world_rank, int world_size);
// Where a failure is also logged: <run dir>/log.txt once this run owns the run directory.
void report_job_failures_to(const std::string& log_path);
// The checkpoint directory, so a failure message can say where to resume from.
void report_job_failure_resume_point(const std::string& checkpoint_dir);
// The node's heartbeat board, if the stall watch is on (nullptr: none).
void report_job_failures_on(HeartbeatBoard* board);

// While one lives, a failure this rank reports is `job`'s: co-located jobs share one console, so
// the console line starts with the job's prefix ("[lr_0.01] "), and the line goes to the job's own
// log.txt. Left by an exception it keeps naming the job, which is the one that failed (the agreed
// errors main() catches unwind through it; any other ends the job before unwinding).
class FailingJobScope {
 public:
  explicit FailingJobScope(Job& job);
  ~FailingJobScope();
  FailingJobScope(const FailingJobScope&) = delete;
  FailingJobScope& operator=(const FailingJobScope&) = delete;

 private:
  std::string previous_prefix_, previous_log_;
  int exceptions_ = std::uncaught_exceptions();
};

// Rank 0's report of an error every rank raised together (AgreedError, Diverged): stderr and
// the log, if this run owns one. main() then returns the status on every rank.
void report_agreed_failure(const std::string& line);

// Ends the job from this rank: message, log, board, MPI_Abort(status) (or _Exit for one rank).
[[noreturn]] void end_job(int status, const std::string& line);

}  // namespace wt
