#pragma once
// The wavetrain command line:
//   wavetrain DECK [--set section.key=value]... [--run-dir DIR] [--restart | --restart-from FILE]
//             [--overwrite] [--skip-locked] [--walltime T] [--steps N] [--quiet]
//             [--show-stages] [--show-schedule] [--help-deck] [--version]
//   wavetrain --check-data FILE [--deck DECK]
//   wavetrain --evaluate CHECKPOINT [DECK] [--data FILE] [--run-dir DIR] [--set ...]
//   wavetrain --predict CHECKPOINT [DECK] --data FILE --output FILE [--set ...]
//   wavetrain DECK --simulate --ranks R --device v100|a100|h100|FILE [--profile FILE]
//   wavetrain DECK --show-auto --ranks R --device v100|a100|h100|FILE [--profile FILE]
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace wt {

struct CommandLine {
  std::string deck;                    // the input deck
  std::vector<std::string> overrides;  // --set section.key=value, in command-line order
  std::string run_dir;                 // --run-dir; empty = <run.output_dir>/<run.name>
  bool restart = false;                // --restart: resume from the run directory's checkpoint
  std::string restart_from;            // --restart-from FILE: resume from this checkpoint
  bool skip_locked = false;            // --skip-locked: resume past a locked checkpoint
  bool overwrite = false;              // --overwrite: replace an earlier run in the run directory
  int64_t steps = 0;                   // --steps N; 0 = as the deck says
  double walltime_s = 0;               // --walltime; 0 = none
  bool quiet = false;                  // --quiet: no progress lines
  bool show_stages = false;            // --show-stages: print the stage split and exit
  bool show_schedule = false;          // --show-schedule: print the schedule table and exit
  int ranks = 0;                       // --ranks N for --show-*/--simulate; 0 = the MPI world size
  bool show_plan = false;              // --show-plan: print the burst planner's plan and exit
  bool show_auto = false;              // --show-auto: print schedule.kind = "auto"'s ranking
  bool simulate = false;               // --simulate: predict the schedule with the cost model
  std::string device;                  // --device for --simulate: a built-in name or a file
  std::string profile;                 // --profile FILE: measured layer times for --simulate
  std::string simulate_trace;
  std::string check_data;  // --check-data FILE: check a dataset (against --deck), exit          //
                           // --simulate-trace FILE: the simulated run as a trace.h5
  std::string evaluate;    // --evaluate CHECKPOINT: test metrics of a trained model, exit
  std::string predict;     // --predict CHECKPOINT: class probabilities of --data, to --output
  std::string data;        // --data FILE for --evaluate and --predict
  std::string output;      // --output FILE for --predict
  // --help, --help-deck or --version was printed to `out`: main should return 0 right away.
  bool exit_now = false;
};

// Parses argv. Bad usage throws wt::InputError("", 0, "--option", message); help and version
// text go to `out` and set exit_now. Never calls exit().
CommandLine parse_command_line(int argc, const char* const* argv, std::ostream& out);
CommandLine parse_command_line(int argc, char** argv);  // prints to std::cout

const char* wavetrain_version();

}  // namespace wt
