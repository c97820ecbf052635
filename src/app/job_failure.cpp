#include "app/job_failure.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>

#include "app/exit_status_file.hpp"
#include "comm/failure_agreement.hpp"
#include "comm/heartbeat_board.hpp"
#include "job/job.hpp"

namespace wt {

namespace {

struct FailureRecord {
  int world_rank = 0;
  int world_size = 1;
  std::string log_path;
  std::string prefix;  // the failing job's console prefix (co-location)
  std::string checkpoint_dir;
  HeartbeatBoard* board = nullptr;
};
FailureRecord record;  // see the header: the terminate handler takes no argument

// A failure every rank shares (the same bad input reached on every rank after training started)
// is reported once: rank 0 reports at once and its MPI_Abort ends the others within this delay.
constexpr unsigned kNonRootGraceMicroseconds = 1'500'000;

std::string resume_hint() {
  if (record.checkpoint_dir.empty()) return "";
  std::ifstream latest(record.checkpoint_dir + "/latest");
  std::string name;
  if (!(latest >> name)) return "";
  return " (the last checkpoint, " + record.checkpoint_dir + "/" + name +
         ", is intact: resubmit with --restart to resume from it)";
}

[[noreturn]] void on_uncaught_exception() {
  int status = 1;
  std::string line =
      "wavetrain: rank " + std::to_string(record.world_rank) + ": error: unknown exception";
  if (std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      status = failure_status(e);
      line = failure_line(e, record.world_rank);
    } catch (...) {
    }
  } else {
    line = "wavetrain: rank " + std::to_string(record.world_rank) + ": terminated";
  }
  end_job(status, line + (status == 1 || status == 3 ? resume_hint() : ""));
}

}  // namespace

void install_job_failure_handler(int world_rank, int world_size) {
  record.world_rank = world_rank;
  record.world_size = world_size;
  std::set_terminate(on_uncaught_exception);
}

void report_job_failures_to(const std::string& log_path) { record.log_path = log_path; }

void report_job_failure_resume_point(const std::string& checkpoint_dir) {
  record.checkpoint_dir = checkpoint_dir;
}

void report_job_failures_on(HeartbeatBoard* board) { record.board = board; }

FailingJobScope::FailingJobScope(Job& job)
    : previous_prefix_(record.prefix), previous_log_(record.log_path) {
  record.prefix = job.log().prefix();
  record.log_path = job.run_dir() + "/log.txt";
}

FailingJobScope::~FailingJobScope() {
  if (std::uncaught_exceptions() > exceptions_) return;  // this job failed: its report names it
  record.prefix = previous_prefix_;
  record.log_path = previous_log_;
}

void report_agreed_failure(const std::string& line) {
  std::fprintf(stderr, "%s%s\n", record.prefix.c_str(), line.c_str());
  std::fflush(stderr);
  if (!record.log_path.empty())
    if (std::FILE* log = std::fopen(record.log_path.c_str(), "a")) {
      std::fprintf(log, "%s\n", line.c_str());
      std::fclose(log);
    }
}

void end_job(int status, const std::string& line) {
  if (record.board) record.board->mark_failed();
  if (record.world_rank == 0) record_exit_status(status);  // for job scripts, as main() does
  if (record.world_size > 1 && record.world_rank != 0) ::usleep(kNonRootGraceMicroseconds);
  report_agreed_failure(line);
  if (record.world_size == 1) std::_Exit(status);  // nobody to stop: no MPI_Abort banner
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

}  // namespace wt
