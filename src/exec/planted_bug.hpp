#pragma once
// Test only: ordering bugs a CUDA host program can have, each planted on demand in the real code
// (WAVETRAIN_TEST_PLANT_BUG=<name>), so tests/e2e/strict_planted_bugs.sh can show that the strict
// device catches every one with a clear message while the host device trains on unaware. Three
// are program bugs (a schedule generator emitting the wrong order, planted after the validator
// has passed the program), three are bugs in the executor, one in the device's queues, six
// in the device glue that Record, Wait, transfers and graph captures run through, and three more of
// other classes. One more, HalvesFreeEarly, is an equivalence test's to catch.
#include <string>

#include "sched/instruction.hpp"

namespace wt {

enum class PlantedBug {
  None,
  WaitAfterRead,       // the Wait on a received activation moved after the Forward reading it
  FreeSentGradient,    // a sent gradient's buffer dropped while the send still reads it
  ReadTotalsUnsynced,  // the step's loss totals read on the host without a staged copy
  StepBeforeWait,      // the optimizer Step moved before the Waits on its gradients' AllReduce
  KeepOnOtherStream,   // ticktock's KeepGradient issued on the other wave's stream
  CompletedAlways,     // the strict queues' event query answers "done" for work not yet run
  // Bugs in the device glue the CUDA backend ports (device/strict_program_events.cpp):
  CommNotGated,         // a transfer starts without waiting for its issuing stream's work
  RecordDoneAtIssue,    // a Record marks its event complete when issued, not when its stream gets
                        // there
  CompletionAfterDone,  // a transfer's completion work (a decode) runs after its event reads
                        // complete
  CaptureForksNone,     // a graph's capture forks none of the streams in use from the capturing
                        // one (a stream whose step does not begin with a Wait escapes it)
  CommNotJoined,        // a graphed step's transfer issued on the communication stream without
                        // its wait for the issuing stream's event (so outside the capture)
  PolledInGraph,        // the host polls a graphed step's transfers (an event query in a capture)
  // A program bug in host code: a gradient clip through staged copies between an AllReduce's
  // start and its Wait (MPI's in-place sum overwrites the stale write-back; NCCL would not).
  HostCopyInAllreduce,
  // Three more classes: a Record moved before the work its event stands for (a program bug); a
  // kernel writing a buffer that a transfer in flight still reads (the gradients zeroed right after
  // their AllReduce starts); a Wait on the wrong event (one already complete: a program bug).
  RecordBeforeWork,
  WriteDuringTransfer,
  WaitOnWrongEvent,
  // Whole-step graphs (exec/executor_graphs.cpp): the optimizer's learning rate and corrections
  // passed by value, not through device memory (a graph replays the captured ones); batches copied
  // in from the preloader's rotating buffers instead of fixed ones (their reuse asks events inside
  // the step); the labels' pinned buffer allocated anew each step (the captured loss reads the old
  // one); a synchronisation inside a graphed step; dropout's generator state passed by value (a
  // graph replays the captured masks).
  StaleGraph,
  GraphInputsMoved,
  GraphLabelsMoved,
  GraphSyncInStep,
  GraphDropoutByValue,
  // A captured step's allocation on one stream handed a block another stream freed, with no
  // captured event ordering the free first (the graph pool's cross-stream reuse without its rule).
  GraphReuseUnordered,
  // A convolution's workspace taken by the op at issue (CudaOps' fallback), not reserved by the
  // layer first: a replayed graph step's kernel calls launch nothing, so its allocations differ
  // from its capture's (model/layer.hpp's LayerContext::workspace).
  OpScratchAtIssue,
  // Overlapped steps (device.overlap_steps): every step's pinned inputs through one set, so the
  // host rewrites them while the last step's graph may still copy them in; a step's results read
  // from their pinned buffer without waiting for the event after their copy.
  OverlapOneInputSet,
  OverlapReadUnwaited,
  // A backward in halves (model/backward_part.hpp) whose first half frees the node's output
  // gradient and saved state, as a whole pass does: no device fault follows (the second half
  // finds no gradient and adds nothing), a silently different model that the halves'
  // equivalence test (tests/e2e/background_split_backward.sh) catches, not the strict device.
  HalvesFreeEarly,
  // Not a bug: a device library's failure (cuDNN's or cuBLAS's, as util/cuda_check.hpp reports
  // it) injected into the last rank's first convolution or linear layer, so that
  // tests/e2e/rank_failure.sh can show what a user reads and that the whole job ends with it.
  LibraryFailure,
};

// "" -> None; throws std::invalid_argument naming the known names for anything else.
PlantedBug parse_planted_bug(const std::string& name);
// The program bugs: mutates `program` (every rank); the others leave it alone. Throws
// std::logic_error when the program has no place for the bug (a test naming the wrong schedule).
void plant_in_program(PlantedBug bug, Program& program);
// LibraryFailure: throws DeviceLibraryError as a failing cuDNN (conv2d) or cuBLAS (linear) call
// would; other layers return.
void throw_planted_library_failure(const std::string& layer_type);

}  // namespace wt
