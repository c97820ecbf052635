#pragma once
// The executor: the only code that runs instructions on real tensors. One executor serves every
// schedule. On a CPU the program's streams are interleaved on one thread in dependency order: a
// stream runs until it must wait for an event, then the next stream gets its turn; outstanding
// communication is polled between instructions and between layers so it overlaps compute.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "data/batch_source.hpp"
#include "device/device_context.hpp"
#include "exec/nonfinite_guard.hpp"
#include "exec/planted_bug.hpp"
#include "exec/step_readback.hpp"
#include "model/model.hpp"
#include "ops/optimizers.hpp"
#include "sched/instruction.hpp"
#include "sched/stage_residency.hpp"

namespace wt {

struct StepStats {
  double loss_sum = 0;  // sum of per-sample losses computed on this rank
  double correct = 0;   // correct argmax predictions on this rank
  int64_t samples = 0;  // samples whose loss this rank computed
};

// Told about every executed instruction (traces). Times are steady_clock seconds.
class InstructionObserver {
 public:
  virtual ~InstructionObserver() = default;
  // After each instruction. A Wait begins when its stream first found the event pending, so its
  // row shows the time the stream was blocked. bytes: LoadBatch input bytes, communication
  // payload bytes, else 0.
  virtual void executed(int stream, const Instruction& ins, double t_begin, double t_end,
                        int64_t bytes) = 0;
  // Just before the instruction's host code runs (its device work is issued after this).
  virtual void issuing(int stream, const Instruction& ins) {
    (void)stream;
    (void)ins;
  }
  // When the executor sees the asynchronous communication that completes `event` finish.
  virtual void completed(int event, double t) = 0;
};

// Stage memory (see stage_residency.hpp): the executor holds a stage only while this rank's
// instructions need it. Stages this rank Steps are held all run. A stage it never Steps but
// receives by Broadcast (root != this rank) is borrowed: its values are materialized when this
// rank issues that Broadcast and released after the last Forward/Backward on it before the next
// one; its gradients are materialized (zeroed) by the first Backward or Reduce on it and
// released once this rank's Reduce of them (root != this rank) has completed. Stages the rank's
// program never names are released at construction. So under waves on N ranks a rank holds its
// own stage, the stages whose forward..backward window is open and the prefetched one, instead
// of all N; gang and ticktock hold everything, pipeline only the rank's own stage.
class Executor {
 public:
  // more_replicas: the replicas beyond `model` that the program asks for (program.replicas - 1),
  // built from the same graph and cuts; replica 0 is `model`, the one evaluate() uses. Held
  // stages are materialized (a Model built with StageStorage::Deferred gets its storage here; its
  // init() may follow), the others released.
  // device: the rank's device context, whose streams run the instructions' work and whose
  // kernels they call; the model's allocator must be the device's.
  Executor(DeviceContext& device, Model& model, Communicator& comm, Optimizer& optimizer,
           BatchSource& data, Program program, uint64_t seed,
           std::vector<Model*> more_replicas = {});
  ~Executor();

  // Runs one step of the program with learning rate lr.
  StepStats run_step(int64_t step, double lr);
  // run_step in parts, for a driver that interleaves several jobs' executors on one device
  // (exec/colocated_step.hpp): begin_step; then issue_ready (the instructions whose waits are
  // met, or only the first of them with just_one; false when none is) until step_issued, calling
  // wait_for_progress when nothing is ready; then finish_step (waits for the device, reads the
  // totals).
  void begin_step(int64_t step, double lr);
  bool issue_ready(bool just_one);
  bool step_issued() const;
  // Issues the whole step (waiting for progress where it must): run_step's middle.
  void issue_step();
  // Instructions of this step issued so far, and in all, over all streams.
  size_t issued_this_step() const;
  size_t step_instructions() const;
  // launch_step then collect_step.
  StepStats finish_step();
  // finish_step in two halves. launch_step ends the step's issue (a graphed step's results are
  // copied out by its last work, and its graph launched); collect_step waits for the oldest
  // launched step's results and returns its totals. Between them the host may begin and issue
  // the next step where may_run_on() said so after the launch (device.overlap_steps).
  void launch_step();
  StepStats collect_step();
  // Whether the step just launched may still run while the next step is issued: a replayed
  // graph, with overlap allowed (allow_overlap), whose inputs came through the other pinned set
  // than the next step's.
  bool may_run_on() const { return !launched_.empty() && launched_.back().ended; }
  // device.overlap_steps where the job permits it (job.cpp: not for a program that communicates
  // or a guard that skips updates; the training loop also collects each step under the allocator's
  // reuse after a synchronisation). With it, two pinned sets and two graphs.
  void allow_overlap(bool on);
  // Whether a launched step has not been collected (a checkpoint or evaluation must not be taken).
  bool steps_in_flight() const { return !launched_.empty(); }
  // Steps whose results were read after the next step was issued (the summary).
  int64_t overlapped_steps() const { return overlapped_steps_; }
  // The instruction stream `stream` of this rank issues next this step; nullptr when it has
  // issued them all (a multiplexing driver reads what a blocked foreground waits on).
  const Instruction* next_instruction(int stream) const;
  // Whether the communication that completes `event` has been issued and not been seen complete.
  bool in_flight(int event) const { return events_->in_flight(event); }
  // Drops the begun step (a background job's out-of-memory): the batches' tensors and the
  // partial gradients go, the next step's loads are planned; nothing of it reaches the weights
  // unless the optimizer had already stepped a stage. No communication may be in flight.
  void abandon_step();
  // The host issues nothing more until something completes: the strict device runs queued work,
  // communication progresses; throws when nothing ever will (a deadlock).
  void wait_for_progress();
  // The same without the throw: false when nothing progressed (several executors on one device
  // decide together whether they are stuck).
  bool try_progress();
  // Polls this executor's outstanding communication; false when there is none. Several executors
  // on one strict device drain its queues polling all of them (their queued work waits on any
  // one's transfers).
  bool poll_communication() { return events_->poll(); }
  // Forward-only evaluation of one batch through every stage (all stages must be local: after
  // prepare_evaluation() when this rank does not hold them all).
  StepStats evaluate(const Tensor& inputs, const std::vector<int32_t>& labels);
  // Collective: materializes every stage's values and copies every stage that a single rank owns
  // (steps) from its owner to all ranks, so that evaluate() sees current weights under
  // model-parallel schedules.
  void prepare_evaluation();
  // Releases again the values prepare_evaluation() materialized for stages this rank does not
  // hold (see above). Local; call when the evaluation is over.
  void finish_evaluation();
  Residency residency(int replica, int stage) const { return residency_.stages[replica][stage]; }

  const Program& program() const { return program_; }
  // This rank's part of it.
  const RankProgram& rank_program() const { return program_.ranks[size_t(rank_)]; }
  // nullptr detaches; unobserved execution reads no clock.
  void set_observer(InstructionObserver* observer) { observer_ = observer; }
  InstructionObserver* observer() const { return observer_; }
  DeviceContext& device() { return device_; }  // the rank's (traces read its clock)
  // Each Step counts its gradient's NaN/Inf values into the guard's device memory, and its update
  // skips on that count (nullptr: unguarded). The guard's end_step() follows run_step().
  void set_guard(NonFiniteGuard* guard);
  // Whole-step graphs (device.cuda_graphs; exec/executor_graphs.cpp): after the first step, a step
  // is captured once and later steps replay it, while the host's bookkeeping runs as usual.
  // graphs_refusal(): "" when this rank can have them, else why not (the job logs it and runs
  // eagerly); enable_graphs() turns them on where it is "".
  std::string graphs_refusal() const;
  void enable_graphs();
  // Whether any rank's program communicates: then its ranks must all graph or none (a collective
  // NCCL call captured on some ranks and issued eagerly on others is undefined).
  bool program_communicates() const;
  // The host's seconds issuing the last collected step, from begin_step to its last launch (a
  // replayed graph's included), before it waits for the device: on a GPU, what the host adds to a
  // step (unless the step overlapped the device's last one: device.overlap_steps).
  double last_issue_seconds() const { return issue_seconds_; }
  // Steps captured and replayed so far (tests, the summary).
  int64_t graph_captures() const { return graph_captures_; }
  int64_t graph_replays() const { return graph_replays_; }
  void plant_bug(PlantedBug bug) { planted_ = bug; }
  // ScaleDNN: a stage owner's Broadcast of its parameters travels encoded (buffers exact); the
  // owner keeps its exact values, the others decode. Inactive by default.
  void set_weight_codec(WeightCodec codec) { codec_ = std::move(codec); }
  // [replica][stage]: each wave's kept local gradient (Eq. 1 state carried between steps), for
  // checkpoints; undefined until first kept.
  std::vector<std::vector<Tensor>>& kept_gradients() { return kept_; }

 private:
  struct Slot;
  // Issues instruction `index` of stream `s`: its host code runs now; its kernels and transfers
  // go on the stream (run now on the host device, later on the strict device).
  void issue(int s, size_t index, int64_t step, double lr);
  // Runs `work` as device work on stream 0 and waits for it (evaluation, between steps).
  void run_on_device(const std::function<void()>& work);
  // The step's loss and accuracy totals live in device memory (step_totals_: two doubles per
  // stream, so streams never add into the same memory); the loss kernels add to them and the host
  // reads them once per step through a staged copy. The sample count is the host's.
  double* device_totals(int stream);
  float* device_input_check(int stream);  // ops' record of a bad input on this stream
  // An InputError naming the first bad input the step's ops found, from the staged readback.
  void raise_input_checks(const float* staged, int64_t step);
  int64_t totals_floats() const;  // two doubles (four floats) per stream
  // On each stream (a step), or all on stream 0 (an evaluation).
  void zero_totals(bool each_on_its_stream);
  // step < 0: an evaluation's (a fresh copy). samples: whose losses the totals hold.
  StepStats read_totals(int64_t step, int64_t samples);
  // The kernels, issued on the running instruction's stream.
  const OpsBackend& ops() { return device_.ops(current_stream_); }
  void execute(const Instruction& ins, int64_t step, double lr, bool may_block);
  void execute_load(const Instruction& ins, int64_t step);
  // may_block: a blocking collective (nothing to overlap with; see the constructor).
  void execute_allreduce(const Instruction& ins, bool may_block);
  // The planted bug HostCopyInAllreduce: a gradient clip through staged copies.
  void clip_on_host(Tensor& grads);
  // The optimizer step of a stage, skipped on the device when its gradient is not finite.
  void execute_step(const Instruction& ins, int64_t step, double lr);
  void forward_nodes(Model& model, Slot& slot, int begin, int end, Mode mode, float loss_scale,
                     bool free_dead);
  // What the issuing transfer (and its completion work) touches: declared with it (start()).
  void comm_touches(const Instruction& ins, const float* ptr, int64_t count, bool write);
  struct NodeRange {
    int begin, end;   // the Backward's nodes
    int stage_begin;  // its stage's first node
  };
  void backward_nodes(Model& model, Slot& slot, NodeRange range, BackwardPart part);
  // Whether a Backward in the stage beginning at node stage_begin computes node src's gradient.
  bool needs_input_gradient(int src, int stage_begin) const;
  Model& replica(const Instruction& ins) { return *replicas_[ins.replica]; }
  void execute_gradient_exchange(const Instruction& ins);
  // Deadlock messages: each stream's blocking Wait with the instruction that should complete its
  // event (and the peer rank it waits for).
  std::string describe_blocked() const;
  std::string describe_producer(int event) const;
  // Throws if a Forward/Backward names a stage whose values this rank does not hold.
  void require_values(const Instruction& ins);
  // Whether the host has seen `event` complete.
  bool event_done(int event) { return events_->completed(event); }
  int64_t bytes_moved(const Instruction& ins) const;
  // Starts the transfer `begin` makes, completing `event`, after the issuing stream's work so far
  // (device/program_events.hpp): `hold` stays alive and `then` runs on the communication stream
  // once it is done, before the event completes. It touches what comm_touches declared.
  using BeginTransfer = std::function<std::unique_ptr<AsyncOperation>(const OpsBackend& comm)>;
  using CompletionWork = std::function<void(const OpsBackend& comm)>;
  void start(int event, BeginTransfer begin, std::vector<Tensor> hold = {},
             CompletionWork then = nullptr);
  BeginTransfer send(const float* data, int64_t count, const Instruction& ins);
  BeginTransfer receive(float* data, int64_t count, const Instruction& ins);
  BeginTransfer reduce(float* data, int64_t count, const Instruction& ins);
  void execute_transfer(const Instruction& ins);
  void execute_rows(const Instruction& ins);  // burst: SendRows, RecvRows, CopyRows
  // The batch positions of the rows `stage` computes on when they were re-laid for it, else null.
  const int64_t* samples_of(const Slot& slot, int stage) const;
  BatchRequest request_of(const Instruction& load, int64_t step) const;
  void execute_broadcast(const Instruction& ins, Stage& st);
  // The parameters' part of a Broadcast through codec_: the words by a collective, raw mode's
  // side list from the root to each member; decoded into the values when both have arrived.
  // Allocates the encoded buffers now; what it returns encodes and starts the transfers.
  BeginTransfer broadcast_encoded(const Instruction& ins, Stage& st, CompletionWork* then,
                                  std::vector<Tensor>* hold);
  void execute_reduce(const Instruction& ins, Stage& st);
  // Throws std::logic_error when a transfer's tensor is not the size the instruction says.
  void check_transfer_bytes(const Instruction& ins, const Tensor& t) const;
  void check_stage_boundaries() const;
  void gather_owned_stages();  // prepare_evaluation's work
  // This rank's LoadBatch instructions of `step`, as requests, in program order.
  std::vector<BatchRequest> loads_of_step(int64_t step) const;

  // Graphs: what this step is (chosen by begin_step), its start and its end (finish_step).
  enum class GraphStep { Eager, Capture, Replay };
  GraphStep choose_graph_step() const;
  void choose_graph_set();  // this step's pinned set and program events (begin_step)
  // Before a step is issued while the last one runs on: enforces the one-step lag and that the
  // two use different pinned sets; waits for it where this step will not replay a graph.
  void check_running_step();
  void begin_graph_step();
  void end_graph_step_issue();  // before the step's device work is waited for
  // After it: the step's memory is free again (a step left running: at its launch, launch_step).
  void end_graph_step();
  // The labels the loss reads: in a graphed step, slot's copy in a fixed pinned buffer.
  const int32_t* loss_labels(Slot& slot);
  // The generator state dropout reads from memory: in a graphed step, slot's in a fixed pinned
  // word; nullptr (by value) otherwise.
  const uint64_t* pinned_rng_state(Slot& slot);

  Model& model_;
  DeviceContext& device_;  // its kernels, streams and memory
  bool graphs_ = false;
  bool graphs_communicate_ = false;  // a graphed step holds collectives: its read-back is watched
  GraphStep graph_step_ = GraphStep::Eager;
  bool graph_captured_[2] = {false, false};  // per pinned set (device_backend.hpp's two graphs)
  int graph_set_ = 0;                        // this step's set of pinned inputs
  bool overlap_ = false;                     // allow_overlap
  // Steps launched and not yet collected (two at most: one left running, one just launched).
  struct LaunchedStep {
    int64_t step = 0, samples = 0;
    int set = 0;               // its pinned set
    double issue_seconds = 0;  // last_issue_seconds() once it is collected
    GraphStep graph = GraphStep::Eager;
    StreamEvent done;     // graphed: recorded after the graph, and so after its results' copy
    bool ended = false;   // its graph step ended at its launch: it may run on (may_run_on)
    bool waited = false;  // check_running_step waited for it already
  };
  std::deque<LaunchedStep> launched_;
  int64_t overlapped_steps_ = 0;
  int64_t eager_steps_ = 0;  // since graphs were enabled: the first builds lazy state
  int64_t graph_captures_ = 0, graph_replays_ = 0;
  // What a graphed step's kernels read from the host, per slot: fixed pinned memory, sized in an
  // eager step (a capture allocates none), rewritten each step.
  struct GraphPinned {  // one per pinned set
    int32_t* labels[2] = {nullptr, nullptr};
    size_t label_count[2] = {0, 0};
    uint64_t* rng_state[2] = {nullptr, nullptr};
  };
  std::vector<GraphPinned> graph_pinned_;       // per slot
  GraphPinned* graph_pinned(const Slot& slot);  // nullptr: no graphs, or not a step's slot
  int64_t samples_ = 0;                         // this step's (or evaluation's) loss samples
  PlantedBug planted_ = PlantedBug::None;
  StepReadback readback_;         // what the host reads once per step, in one copy
  int64_t totals_at_ = 0;         // in readback_: per stream, loss sum and correct (doubles)
  int64_t checks_at_ = 0;         // in readback_: per stream, a kern::InputCheck
  std::vector<Model*> replicas_;  // [0] = &model_
  std::vector<std::vector<Tensor>> kept_;  // [replica][stage]: a wave's kept local gradient
  Communicator& comm_;
  Optimizer& optimizer_;
  BatchSource& data_;
  Program program_;
  std::vector<Instruction> loads_;  // this rank's LoadBatch instructions, stream by stream
  size_t loads_done_ = 0;           // of loads_, in the current step; all done: plan the next
  // Per slot that only receives rows (a burst rank running a middle segment): the step's global
  // batch it holds, whose dropout generator run_step forks; -1 where a LoadBatch forks it.
  std::vector<int> slot_batch_;
  uint64_t seed_;
  int rank_;
  int64_t step_ = 0;                            // the step in hand (begin_step)
  double issue_began_ = 0, issue_seconds_ = 0;  // last_issue_seconds(): the last collected step's
  double lr_ = 0;
  std::vector<size_t> position_;  // per stream: the next instruction to issue this step
  std::vector<std::unique_ptr<Slot>> slots_;
  // Record, Wait and transfers on the device: this step's set. With overlap, two, alternating
  // with the pinned sets: a step's Records and Waits must not see the one left running's.
  std::unique_ptr<ProgramEvents> event_sets_[2];
  std::unique_ptr<ProgramEvents> make_program_events();  // with the traces' completion callback
  ProgramEvents* events_ = nullptr;
  std::vector<std::vector<int>> consumers_;
  std::vector<char> gradient_needed_;  // per node: Graph::output_gradient_needed
  // Per stream of this rank, per instruction: an AllReduce with nothing to overlap (see the
  // constructor), run as a blocking collective.
  std::vector<std::vector<char>> may_block_;
  ResidencyPlan residency_;  // which stages this rank holds, and when it drops borrowed ones
  Tensor loss_seed_;         // d(loss)/d(loss) = 1, the gradient every backward pass starts from
  // Scratch argument lists, reused so a layer call allocates nothing on the host heap.
  std::vector<const Tensor*> in_scratch_;
  std::vector<Tensor> din_scratch_;
  std::vector<Tensor*> din_ptr_scratch_;
  InstructionObserver* observer_ = nullptr;
  std::vector<double> wait_since_;  // per stream: when an observed Wait first blocked, else -1
  std::vector<int> visit_order_;    // streams by priority (stream_visit_order)
  const Instruction* issuing_ = nullptr;  // the instruction being issued, while it is
  double completed_in_issue_ = -1;        // when its own event completed during its issue
  int current_stream_ = 0;  // the running instruction's stream: its allocations' stream
  std::vector<TransferAccess> touches_;  // the issuing transfer's (comm_touches)
  NonFiniteGuard* guard_ = nullptr;
  WeightCodec codec_;
  int64_t broadcast_bytes_ = 0;  // the last Broadcast's payload on the wire (traces)
};

}  // namespace wt
