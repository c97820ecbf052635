#pragma once
// The exit status of a run, for the job script that started it. A launcher's own status can
// differ from wavetrain's: Open MPI's mpirun, when it is sent SIGTERM or SIGINT itself, exits 1
// even when every rank saved a checkpoint and exited 75 (the resubmission status). So rank 0 also
// writes its status into the file named by the environment variable WAVETRAIN_EXIT_STATUS_FILE,
// and jobscripts/ use that number when the file is there.
namespace wt {

// Writes "<status>\n" to $WAVETRAIN_EXIT_STATUS_FILE atomically (a temporary file renamed over
// it), so a reader sees the whole number or no file. Does nothing when the variable is unset or
// empty; a write that fails is reported on stderr and otherwise ignored (the caller then has
// only the launcher's status, as without the variable).
void record_exit_status(int status);

}  // namespace wt
