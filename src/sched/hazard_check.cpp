#include "sched/hazard_check.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "sched/opcode_traits.hpp"

namespace wt {

namespace {

constexpr int64_t kFirst = std::numeric_limits<int64_t>::min();
constexpr int64_t kLast = std::numeric_limits<int64_t>::max();

// What an access names: the traits' StateBits, refined. Slot pieces follow the executor's slot:
// boundary b is the input of stage b (0: the loaded input), the output of stage b - 1. Burst keeps
// a stage's re-laid input and its gradient apart from the previous stage's output (`relaid`).
enum class Piece { Activation, Gradient, Labels, Saved, Values, Gradients, Optimizer, Kept };

struct Key {
  Piece piece;
  int job;
  int owner;  // the slot (Activation..Saved) or the replica (Values..Kept)
  int index;  // the boundary (Activation, Gradient) or the stage
  bool relaid;
  bool operator<(const Key& o) const {
    return std::tie(piece, job, owner, index, relaid) <
           std::tie(o.piece, o.job, o.owner, o.index, o.relaid);
  }
};

struct Access {
  Key key;
  int64_t begin, end;  // nodes of a stage's gradients, rows of a boundary tensor; else everything
  bool read, write;
};

// What one instruction reads and writes: its traits' bits, each refined to the pieces and ranges
// the executor really touches, so that disjoint buckets, slots and rows do not look like hazards.
class AccessList {
 public:
  AccessList(const Instruction& ins, int rank, int last_stage)
      : ins_(ins), rank_(rank), last_(last_stage) {
    const OpcodeTraits& t = opcode_traits(ins.op);
    for (uint32_t bit :
         {kSlotData, kStageValues, kStageGradients, kOptimizerState, kKeptGradient}) {
      if (t.reads & bit) add(bit, false);
      if (t.writes & bit) add(bit, true);
    }
  }
  const std::vector<Access>& list() const { return list_; }

 private:
  // One access per piece and range: a read and a write of it are one read-write access.
  void push(Piece piece, int owner, int index, bool relaid, bool write, int64_t begin = kFirst,
            int64_t end = kLast) {
    const Key key{piece, ins_.job, owner, index, relaid};
    for (Access& a : list_)
      if (!(a.key < key) && !(key < a.key) && a.begin == begin && a.end == end) {
        (write ? a.write : a.read) = true;
        return;
      }
    list_.push_back({key, begin, end, !write, write});
  }
  void slot(Piece piece, int index, bool write, bool relaid = false) {
    push(piece, ins_.slot, index, relaid, write);
  }

  void add(uint32_t bit, bool write) {
    if (bit == kSlotData) return write ? slot_writes() : slot_reads();
    const Instruction& i = ins_;
    switch (bit) {
      case kStageValues:
        // A broadcast's root only sends its values.
        if (!(write && i.op == OpCode::Broadcast && i.root == rank_))
          push(Piece::Values, i.replica, i.stage, false, write);
        break;
      case kStageGradients: {
        // Buckets: a bucket's backward, allreduce or reduce touches only its nodes' gradients.
        const bool bucket =
            i.node_begin >= 0 &&
            (i.op == OpCode::Backward || i.op == OpCode::AllReduce || i.op == OpCode::Reduce);
        push(Piece::Gradients, i.replica, i.stage, false, write, bucket ? i.node_begin : kFirst,
             bucket ? i.node_end : kLast);
        break;
      }
      case kOptimizerState:
        push(Piece::Optimizer, i.replica, i.stage, false, write);
        break;
      case kKeptGradient:  // AddKeptGradient reads the other wave's copy
        push(Piece::Kept, write ? i.replica : i.from_replica, i.stage, false, write);
        break;
    }
  }

  void slot_reads() {
    const int s = ins_.stage;
    switch (ins_.op) {
      case OpCode::Forward:  // the stage's input, re-laid or not; the loss reads the labels
        slot(Piece::Activation, s, false);
        if (s > 0) slot(Piece::Activation, s, false, true);
        if (s == last_) slot(Piece::Labels, 0, false);
        break;
      case OpCode::Backward:  // the forward's saved state and input, the output's gradient
        slot(Piece::Saved, s, false);
        slot(Piece::Activation, s, false);
        if (s > 0) slot(Piece::Activation, s, false, true);
        if (s < last_)
          slot(Piece::Gradient, s + 1, false);
        else
          slot(Piece::Labels, 0, false);
        break;
      case OpCode::SendActivation:
        slot(Piece::Activation, s + 1, false);
        break;
      case OpCode::SendGradient:
        slot(Piece::Gradient, s, false);
        break;
      case OpCode::SendRows:
      case OpCode::CopyRows:
        rows(false);
        break;
      default:
        break;
    }
  }

  void slot_writes() {
    const int s = ins_.stage;
    switch (ins_.op) {
      case OpCode::LoadBatch:
        if (!ins_.labels_only) slot(Piece::Activation, 0, true);
        slot(Piece::Labels, 0, true);
        break;
      case OpCode::Forward:
        slot(Piece::Saved, s, true);
        slot(Piece::Activation, s + 1, true);
        break;
      case OpCode::Backward:  // the input's gradient, assembled where the input was re-laid
        slot(Piece::Gradient, s, true);
        if (s > 0) slot(Piece::Gradient, s, true, true);
        break;
      case OpCode::RecvActivation:
        slot(Piece::Activation, s, true);
        break;
      case OpCode::SendGradient:  // drops the gradient it sends and the stage's input
        slot(Piece::Gradient, s, true);
        slot(Piece::Activation, s, true);
        break;
      case OpCode::RecvGradient:
        slot(Piece::Gradient, s + 1, true);
        break;
      case OpCode::RecvRows:
      case OpCode::CopyRows:
        rows(true);
        break;
      default:
        break;
    }
  }

  // Forward, rows go from the previous stage's output into the stage's re-laid input; backward,
  // from the re-laid input's gradient into the previous stage's output gradient.
  void rows(bool target) {
    const int64_t first = target && ins_.op == OpCode::CopyRows ? ins_.to_row : ins_.row_begin;
    push(ins_.gradient ? Piece::Gradient : Piece::Activation, ins_.slot, ins_.stage,
         ins_.gradient != target, target, first, first + ins_.rows);
  }

  const Instruction& ins_;
  const int rank_, last_;
  std::vector<Access> list_;
};

struct Ref {
  int stream;
  size_t index;
};

// Happens-before on one rank, as vector clocks: clock(y)[t] is how many of stream t's first
// instructions y's stream has passed or heard of (by a Wait on an event recorded or completed
// after them) when y starts. A computation is over once passed; a communication only after a Wait
// on its event has been passed, since it runs on after its issue.
class Order {
 public:
  explicit Order(const RankProgram& rank) : rank_(rank), n_(rank.streams.size()) {
    clocks_.resize(n_);
    for (size_t s = 0; s < n_; ++s) {
      clocks_[s].assign((rank.streams[s].size() + 1) * n_, 0);
      for (size_t i = 0; i < rank.streams[s].size(); ++i)
        if (opcode_traits(rank.streams[s][i].op).waits_event)
          waits_[rank.streams[s][i].event].push_back({int(s), i});
    }
    complete_ = run();
  }

  // False if some stream never gets past a Wait (a deadlock, reported by another check).
  bool complete() const { return complete_; }
  const Instruction& at(Ref r) const { return rank_.streams[size_t(r.stream)][r.index]; }

  // Whether x's stream had passed x when y starts: a computation has finished by then, a
  // communication has only been issued.
  bool passed(Ref x, Ref y) const { return clock(y)[x.stream] > x.index; }

  // Whether everything x does is over before y starts.
  bool finished_before(Ref x, Ref y) const {
    if (!is_communication(at(x).op)) return passed(x, y);
    auto it = waits_.find(at(x).event);
    if (it == waits_.end()) return false;
    for (const Ref& w : it->second)
      if (passed(w, y)) return true;
    return false;
  }

 private:
  const size_t* clock(Ref r) const { return &clocks_[size_t(r.stream)][r.index * n_]; }

  // Fills the clocks in an order that passes a Wait only after its event's completer (a Record,
  // or a communication: its event fires after it on its stream, so it carries its stream's past).
  bool run() {
    std::map<int, std::vector<size_t>> fired;  // event -> the clock just after its completer
    std::vector<size_t> pos(n_, 0);
    for (bool progressed = true; progressed;) {
      progressed = false;
      for (size_t s = 0; s < n_; ++s)
        for (; pos[s] < rank_.streams[s].size(); ++pos[s], progressed = true) {
          const size_t i = pos[s];
          const Instruction& ins = rank_.streams[s][i];
          const OpcodeTraits& t = opcode_traits(ins.op);
          auto event = fired.end();
          if (t.waits_event && (event = fired.find(ins.event)) == fired.end()) break;
          const size_t* now = &clocks_[s][i * n_];
          size_t* next = &clocks_[s][(i + 1) * n_];
          std::copy(now, now + n_, next);
          next[s] = i + 1;
          if (t.waits_event)
            for (size_t k = 0; k < n_; ++k) next[k] = std::max(next[k], event->second[k]);
          if (t.completes_event) fired[ins.event].assign(next, next + n_);
        }
    }
    for (size_t s = 0; s < n_; ++s)
      if (pos[s] < rank_.streams[s].size()) return false;
    return true;
  }

  const RankProgram& rank_;
  const size_t n_;
  std::vector<std::vector<size_t>> clocks_;  // per stream: (length + 1) rows of n_ entries
  std::map<int, std::vector<Ref>> waits_;    // event -> the Waits on it
  bool complete_ = false;
};

struct Touch {
  Ref at;
  Access access;
};

// "stage 0's gradients of nodes [2,4)", "slot 1's activation entering stage 2 (re-laid) rows
// [0,4)": the piece two accesses share, and the range where they overlap.
std::string describe(const Key& k, int64_t begin, int64_t end) {
  const std::string slot = "slot " + std::to_string(k.owner) + "'s ";
  const std::string stage = "stage " + std::to_string(k.index);
  const bool whole = begin == kFirst && end == kLast;
  const std::string range = "[" + std::to_string(begin) + "," + std::to_string(end) + ")";
  std::string s;
  switch (k.piece) {
    case Piece::Activation:
      s = k.index == 0 ? slot + "input" : slot + "activation entering " + stage;
      break;
    case Piece::Gradient:
      s = slot + "gradient at the input of " + stage;
      break;
    case Piece::Labels:
      s = slot + "labels";
      break;
    case Piece::Saved:
      s = slot + "state saved by " + stage + "'s forward";
      break;
    case Piece::Values:
      s = stage + "'s values";
      break;
    case Piece::Gradients:
      s = stage + "'s gradients" + (whole ? "" : " of nodes " + range);
      break;
    case Piece::Optimizer:
      s = stage + "'s optimizer state";
      break;
    case Piece::Kept:
      s = stage + "'s kept gradient";
      break;
  }
  if (k.piece == Piece::Activation || k.piece == Piece::Gradient) {
    if (k.relaid) s += " (re-laid)";
    if (!whole) s += " rows " + range;
  }
  if (k.piece >= Piece::Values && k.owner != 0) s += " of replica " + std::to_string(k.owner);
  if (k.job != 0) s += " of job " + std::to_string(k.job);
  return s;
}

// The first hazard on one rank, or "".
class RankHazards {
 public:
  RankHazards(const RankProgram& rank, int stage_count, int r)
      : rank_(rank), order_(rank), last_(stage_count - 1), r_(r) {}

  std::string find() const {
    if (!order_.complete()) return "";
    std::map<Key, std::vector<Touch>> touches;
    for (size_t s = 0; s < rank_.streams.size(); ++s)
      for (size_t i = 0; i < rank_.streams[s].size(); ++i) {
        const AccessList accesses(rank_.streams[s][i], r_, last_);
        for (const Access& a : accesses.list()) touches[a.key].push_back({{int(s), i}, a});
      }
    for (const auto& [key, list] : touches)
      for (size_t x = 0; x < list.size(); ++x)
        for (size_t y = x + 1; y < list.size(); ++y)
          if (clash(list[x], list[y])) return report(key, list[x], list[y]);
    return "";
  }

 private:
  bool clash(const Touch& a, const Touch& b) const {
    if (a.at.stream == b.at.stream && a.at.index == b.at.index) return false;
    if (!a.access.write && !b.access.write) return false;
    if (a.access.end <= b.access.begin || b.access.end <= a.access.begin) return false;
    return !order_.finished_before(a.at, b.at) && !order_.finished_before(b.at, a.at);
  }

  std::string name(const Touch& t) const {
    return order_.at(t.at).str() + " (stream " + std::to_string(t.at.stream) + ")";
  }

  std::string report(const Key& key, const Touch& a, const Touch& b) const {
    const std::string what = describe(key, std::max(a.access.begin, b.access.begin),
                                      std::min(a.access.end, b.access.end));
    const std::string where = "rank " + std::to_string(r_) + ": ";
    // A communication the other instruction starts after, but not after its Wait.
    for (const auto& [c, y] : {std::make_pair(&a, &b), std::make_pair(&b, &a)}) {
      const Instruction& comm = order_.at(c->at);
      if (is_communication(comm.op) && order_.passed(c->at, y->at))
        return where + name(*y) + (c->access.write && y->access.read ? " reads " : " writes ") +
               what + " that " + name(*c) + " may still be " +
               (c->access.write ? "writing" : "reading") + ": wait on event " +
               std::to_string(comm.event) + " first";
    }
    const Touch& writer = a.access.write ? a : b;
    const Touch& other = &writer == &a ? b : a;
    return where + name(other) + (other.access.read ? " reads " : " writes ") + what + " that " +
           name(writer) +
           " writes, with no event ordering them: record an event after one and wait on it "
           "before the other";
  }

  const RankProgram& rank_;
  const Order order_;
  const int last_, r_;
};

}  // namespace

std::string find_hazard(const Program& program, int stage_count) {
  for (int r = 0; r < static_cast<int>(program.ranks.size()); ++r) {
    std::string hazard = RankHazards(program.ranks[size_t(r)], stage_count, r).find();
    if (!hazard.empty()) return hazard;
  }
  return "";
}

}  // namespace wt
