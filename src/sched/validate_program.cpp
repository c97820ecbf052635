// Static checks of a Program: everything that can be said about a schedule without running any
// math. The deadlock check runs every rank's streams abstractly (a Wait blocks until the operation
// that completes its event could have finished) and reports a deadlock if some stream never
// finishes; the last check looks for data hazards within each rank (sched/hazard_check.hpp).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "sched/abstract_run.hpp"
#include "sched/event_dependencies.hpp"
#include "sched/hazard_check.hpp"
#include "sched/opcode_traits.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

// A point-to-point channel: messages from `src` to `dst` with one tag, matched in order.
using Channel = std::tuple<int, int, int>;

// Where a message instruction sits, to require one stream per channel.
struct Located {
  int stream;
  const Instruction* ins;
};

class Checker {
 public:
  Checker(const Program& p, int stage_count, CommRules rules)
      : p_(p), stages_(stage_count), rules_(rules) {}

  void run() {
    if (static_cast<int>(p_.ranks.size()) != p_.world_size)
      fail("program has " + std::to_string(p_.ranks.size()) + " ranks for a world of " +
           std::to_string(p_.world_size));
    for (int r = 0; r < p_.world_size; ++r) check_rank(r);
    check_coverage();
    check_rows();
    check_collectives();
    check_messages();
    check_progress();
    check_hazards();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error(p_.schedule + ": " + what);
  }
  std::string where(int r, const Instruction& ins) const {
    return "rank " + std::to_string(r) + ": " + ins.str();
  }

  // Range checks, slot identities, events, and what each rank contributes to the global checks.
  struct Identity {  // a slot's batch part
    int batch, part, parts;
  };

  void check_rank(int r) {
    std::map<int, Identity> slot_batch;
    std::map<std::pair<int, int>, Identity> stage_batch;  // (slot, stage): rows re-laid for it
    std::set<int> completed, waited;
    std::map<int, int> group_stream;
    const auto& streams = p_.ranks[r].streams;
    if (!p_.ranks[r].priority.empty() && p_.ranks[r].priority.size() != streams.size())
      fail("rank " + std::to_string(r) + " has " + std::to_string(p_.ranks[r].priority.size()) +
           " stream priorities for " + std::to_string(streams.size()) + " streams");
    for (int s = 0; s < static_cast<int>(streams.size()); ++s) {
      for (size_t i = 0; i < streams[s].size(); ++i) {
        const Instruction& ins = streams[s][i];
        auto bad = [&](const std::string& why) { fail(where(r, ins) + ": " + why); };
        const OpcodeTraits& traits = opcode_traits(ins.op);
        if (traits.needs_stage && (ins.stage < 0 || ins.stage >= stages_))
          bad("stage out of range");
        if (traits.needs_slot && (ins.slot < 0 || ins.slot >= p_.slots)) bad("slot out of range");
        if (ins.replica < 0 || ins.replica >= p_.replicas) bad("replica out of range");
        if (ins.job < 0 || ins.job >= p_.jobs) bad("job out of range");
        if (ins.op == OpCode::AddKeptGradient &&
            (ins.from_replica < 0 || ins.from_replica >= p_.replicas))
          bad("from_replica out of range");
        if (ins.op == OpCode::LoadBatch && !ins.labels_only)
          slot_batch[ins.slot] = {ins.batch, ins.part, ins.parts};
        if (ins.op == OpCode::RecvActivation) {
          if (ins.stage == 0) bad("the first stage reads its input from the data, not a peer");
          slot_batch[ins.slot] = {ins.batch, ins.part, ins.parts};
        }
        if (is_rows(ins.op)) {
          if (ins.stage == 0) bad("the first stage reads its input from the data, not a peer");
          note_rows(r, ins, bad);
          // The stage's re-laid input: its own identity; the slot keeps the previous stage's.
          if (!ins.gradient && ins.op != OpCode::SendRows)
            stage_batch[{ins.slot, ins.stage}] = {ins.batch, ins.part, ins.parts};
        }
        if (ins.op == OpCode::Forward || ins.op == OpCode::Backward) {
          const Identity* id = nullptr;
          if (auto relaid = stage_batch.find({ins.slot, ins.stage}); relaid != stage_batch.end())
            id = &relaid->second;
          else if (auto it = slot_batch.find(ins.slot); it != slot_batch.end())
            id = &it->second;
          note_pass(streams[s], i, id, bad);
        }
        if (traits.completes_event) {
          if (ins.event < 0 || ins.event >= p_.events || !completed.insert(ins.event).second)
            bad("event missing, out of range or completed twice");
          // A Record orders streams of this rank: nothing to match.
          if (ins.op != OpCode::Record) note_communication(r, s, ins, group_stream, bad);
        }
        if (traits.waits_event) {
          if (ins.event < 0 || ins.event >= p_.events) bad("event out of range");
          waited.insert(ins.event);
        }
      }
    }
    for (int e : waited)
      if (!completed.count(e))
        fail("rank " + std::to_string(r) + " waits on event " + std::to_string(e) +
             " that nothing completes (deadlock)");
    for (int e : completed)
      if (!waited.count(e))
        fail("rank " + std::to_string(r) + " never waits on event " + std::to_string(e) +
             ": its communication could outlive the step");
  }

  // A collective's group and stream, or a message's peer and channel, noted for the global checks.
  template <typename Bad>
  void note_communication(int r, int s, const Instruction& ins, std::map<int, int>& group_stream,
                          Bad&& bad) {
    if (is_collective(ins.op)) {
      if (ins.group < 0 || ins.group >= static_cast<int>(p_.groups.size())) bad("unknown group");
      const auto& members = p_.groups[ins.group];
      if (std::find(members.begin(), members.end(), r) == members.end())
        bad("rank is not a member of the group");
      if (ins.op != OpCode::AllReduce &&
          std::find(members.begin(), members.end(), ins.root) == members.end())
        bad("root is not a member of the group");
      auto [it, fresh] = group_stream.emplace(ins.group, s);
      if (!fresh && it->second != s)
        bad(std::string("collectives on one group must come from one stream (") +
            comm_rules_name(rules_) + " orders them)");
      collectives_[{r, ins.group}].push_back(&ins);
      return;
    }
    if (ins.peer < 0 || ins.peer >= p_.world_size || ins.peer == r) bad("peer out of range");
    const Channel channel = message_channel(r, ins, rules_);
    auto& list = is_send(ins.op) ? sends_[channel] : recvs_[channel];
    if (!list.empty() && list.back().stream != s)
      bad(std::string("one channel's messages must come from one stream (") +
          comm_rules_name(rules_) + " orders them)");
    list.push_back({s, &ins});
  }

  // A Forward's or Backward's node range, under its batch part's key; a Backward in halves
  // counts once, with its parameters' half.
  template <typename Bad>
  void note_pass(const std::vector<Instruction>& stream, size_t i, const Identity* id, Bad&& bad) {
    const Instruction& ins = stream[i];
    if (!id) bad("slot used before it is loaded or received");
    if (ins.op == OpCode::Backward && !completes_backward(stream, i, bad)) return;
    const PassKey key{ins.job, ins.stage, id->batch, id->part, id->parts};
    const int b = ins.node_begin < 0 ? -1 : ins.node_begin;
    const int e = ins.node_end < 0 ? -1 : ins.node_end;
    (ins.op == OpCode::Forward ? forward_ranges_ : backward_ranges_)[key].push_back({b, e});
  }

  // A Backward's halves (model/backward_part.hpp) run one node, the input's (dx) followed at once
  // on its stream by the parameters' (dw) of the same node and slot: nothing between them may
  // read the parameter gradients the first leaves undone. False for the input's half.
  template <typename Bad>
  static bool completes_backward(const std::vector<Instruction>& stream, size_t i, Bad&& bad) {
    const Instruction& ins = stream[i];
    if (ins.backward_part == BackwardPart::Whole) return true;
    if (ins.node_begin < 0 || ins.node_end != ins.node_begin + 1)
      bad("a backward half runs one node");
    const bool input = ins.backward_part == BackwardPart::InputGradient;
    const Instruction* other = input ? (i + 1 < stream.size() ? &stream[i + 1] : nullptr)
                                     : (i > 0 ? &stream[i - 1] : nullptr);
    const bool paired =
        other && other->op == OpCode::Backward && other->backward_part != ins.backward_part &&
        other->backward_part != BackwardPart::Whole && other->node_begin == ins.node_begin &&
        other->node_end == ins.node_end && other->stage == ins.stage && other->slot == ins.slot &&
        other->replica == ins.replica && other->job == ins.job;
    if (!paired)
      bad(input ? "the input's half (dx) not followed at once by its parameters' (dw)"
                : "the parameters' half (dw) not right after its input's (dx)");
    return !input;
  }

  // Node coverage of the forward or backward passes of one (stage, batch part): each node of the
  // stage exactly once, whether by one whole-stage pass or by node ranges.
  void check_nodes(const std::string& name, const char* pass,
                   const std::vector<std::pair<int, int>>& ranges) const {
    std::map<int, int> covered;
    for (auto [b, e] : ranges) {
      if (b < 0 || e < 0) {
        covered[-1]++;
        continue;
      }
      for (int n = b; n < e; ++n) covered[n]++;
    }
    if (covered.count(-1) && covered.size() > 1)
      fail(name + ": whole-stage and partial " + pass + " passes overlap");
    for (const auto& [n, c] : covered)
      if (c != 1)
        fail(name + (n < 0 ? std::string(": ") : ": node " + std::to_string(n) + " ") + pass + " " +
             std::to_string(c) + " times");
  }

  // "job 1 stage 0 batch 2": the job only where the program holds several.
  std::string job_stage_batch(int job, int stage, int batch) const {
    return (p_.jobs > 1 ? "job " + std::to_string(job) + " " : std::string()) + "stage " +
           std::to_string(stage) + " batch " + std::to_string(batch);
  }

  // Every part of every global batch goes through every stage of every job forward once and
  // backward once.
  void check_coverage() const {
    // (job, stage, batch) -> parts -> the parts seen
    std::map<std::tuple<int, int, int>, std::map<int, std::set<int>>> parts_seen;
    for (const auto& [key, forward] : forward_ranges_) {
      const auto [job, stage, batch, part, parts] = key;
      const std::string name = job_stage_batch(job, stage, batch) + " part " +
                               std::to_string(part) + "/" + std::to_string(parts);
      if (batch < 0 || batch >= p_.global_batches || parts < 1 || part < 0 || part >= parts)
        fail(name + ": batch or part out of range");
      check_nodes(name, "forward", forward);
      parts_seen[{job, stage, batch}][parts].insert(part);
      auto it = backward_ranges_.find(key);
      if (it == backward_ranges_.end()) fail(name + ": forward without backward");
      check_nodes(name, "backward", it->second);
    }
    for (const auto& [key, ranges] : backward_ranges_)
      if (!forward_ranges_.count(key))
        fail(job_stage_batch(std::get<0>(key), std::get<1>(key), std::get<2>(key)) +
             ": backward without forward");
    for (int job = 0; job < p_.jobs; ++job)
      for (int stage = 0; stage < stages_; ++stage)
        for (int batch = 0; batch < p_.global_batches; ++batch) {
          auto it = parts_seen.find({job, stage, batch});
          const std::string name = job_stage_batch(job, stage, batch);
          if (it == parts_seen.end()) fail(name + ": never computed");
          if (it->second.size() != 1) fail(name + ": cut into parts in two different ways");
          const auto& [parts, seen] = *it->second.begin();
          if (static_cast<int>(seen.size()) != parts) fail(name + ": some parts never computed");
        }
  }

  // MPI matches collectives by order: every member of a group issues the same sequence.
  void check_collectives() const {
    for (size_t g = 0; g < p_.groups.size(); ++g) {
      const std::vector<const Instruction*>* first = nullptr;
      int first_rank = -1;
      for (int r : p_.groups[g]) {
        auto it = collectives_.find({r, static_cast<int>(g)});
        static const std::vector<const Instruction*> none;
        const auto& list = it == collectives_.end() ? none : it->second;
        if (!first) {
          first = &list;
          first_rank = r;
          continue;
        }
        bool same = list.size() == first->size();
        for (size_t k = 0; same && k < list.size(); ++k) {
          const Instruction &a = *list[k], &b = *(*first)[k];
          same = a.op == b.op && a.stage == b.stage && a.node_begin == b.node_begin &&
                 a.node_end == b.node_end && a.root == b.root;
        }
        if (!same)
          fail("ranks " + std::to_string(first_rank) + " and " + std::to_string(r) +
               " issue different collectives on group " + std::to_string(g));
      }
    }
  }

  void check_messages() const {
    std::set<Channel> channels;
    for (const auto& [c, l] : sends_) channels.insert(c);
    for (const auto& [c, l] : recvs_) channels.insert(c);
    for (const Channel& c : channels) {
      auto s = sends_.find(c), r = recvs_.find(c);
      const size_t ns = s == sends_.end() ? 0 : s->second.size();
      const size_t nr = r == recvs_.end() ? 0 : r->second.size();
      const std::string name = "messages from rank " + std::to_string(std::get<0>(c)) +
                               " to rank " + std::to_string(std::get<1>(c)) + " tag " +
                               std::to_string(std::get<2>(c));
      if (ns != nr)
        fail(name + ": " + std::to_string(ns) + " sends but " + std::to_string(nr) + " receives");
      for (size_t k = 0; k < ns; ++k) {
        const Instruction &a = *s->second[k].ins, &b = *r->second[k].ins;
        if (a.bytes != b.bytes || a.bytes <= 0)
          fail(name + ": send of " + std::to_string(a.bytes) + " bytes matched with a receive of " +
               std::to_string(b.bytes));
        if (carries_gradient(a) != carries_gradient(b) || is_rows(a.op) != is_rows(b.op))
          fail(name + ": an activation matched with a gradient, or rows with a whole tensor");
        if (is_rows(a.op) && (a.sample_begin != b.sample_begin || a.rows != b.rows))
          fail(name + ": rows of samples " + std::to_string(a.sample_begin) + "+" +
               std::to_string(a.rows) + " matched with samples " + std::to_string(b.sample_begin) +
               "+" + std::to_string(b.rows));
      }
    }
  }

  // Burst rows: what every rank receives or copies into a boundary tensor tiles its rows exactly,
  // and what it sends or copies out of one covers the rows it holds: forward, the rows it sends
  // are the rows whose gradients come back to it, and the other way round.
  void note_rows(int r, const Instruction& ins, const std::function<void(std::string)>& bad) {
    if (ins.rows <= 0 || ins.total_rows <= 0) bad("no rows, or a tensor of no rows");
    const auto key = std::make_tuple(r, ins.slot, ins.stage, ins.gradient);
    if (ins.op != OpCode::SendRows) {
      const int64_t first = ins.op == OpCode::CopyRows ? ins.to_row : ins.row_begin;
      if (first < 0 || first + ins.rows > ins.total_rows) bad("rows outside the receiving tensor");
      auto [it, fresh] = rows_total_.emplace(key, ins.total_rows);
      if (!fresh && it->second != ins.total_rows) bad("pieces of one tensor of different sizes");
      rows_in_[key].push_back({first, ins.rows});
    }
    if (ins.op != OpCode::RecvRows) rows_out_[key].push_back({ins.row_begin, ins.rows});
  }

  // The extent [0, n) that `pieces` tile without gap or overlap, or -1.
  static int64_t tiled_extent(std::vector<std::pair<int64_t, int64_t>> pieces) {
    std::sort(pieces.begin(), pieces.end());
    int64_t next = 0;
    for (const auto& [first, n] : pieces) {
      if (first != next) return -1;
      next += n;
    }
    return next;
  }

  void check_rows() const {
    for (const auto& [key, pieces] : rows_in_) {
      const auto [r, slot, stage, gradient] = key;
      const std::string name = "rank " + std::to_string(r) + " slot " + std::to_string(slot) +
                               " stage " + std::to_string(stage) +
                               (gradient ? " gradient" : " activation") + " rows";
      const int64_t in = tiled_extent(pieces);
      if (in != rows_total_.at(key))
        fail(name + ": the pieces received do not tile the tensor's " +
             std::to_string(rows_total_.at(key)) + " rows exactly");
      // The rows coming back the other way leave from exactly these rows.
      auto out = rows_out_.find(std::make_tuple(r, slot, stage, !gradient));
      if (out == rows_out_.end() || tiled_extent(out->second) != in)
        fail(name + ": not the rows this rank sends back the other way");
    }
    for (const auto& [key, pieces] : rows_out_) {
      const auto [r, slot, stage, gradient] = key;
      if (!rows_in_.count(std::make_tuple(r, slot, stage, !gradient)))
        fail("rank " + std::to_string(r) + " stage " + std::to_string(stage) +
             ": sends rows that nothing sends back");
    }
  }

  void check_progress() const {
    const std::string stuck = find_stuck_streams(p_, rules_);
    if (!stuck.empty())
      fail(std::string("deadlock under ") + comm_rules_name(rules_) + "'s rules: streams stuck at" +
           stuck);
  }

  // After check_progress: the hazard check orders each rank's streams by their Waits.
  void check_hazards() const {
    const std::string hazard = find_hazard(p_, stages_);
    if (!hazard.empty()) fail(hazard);
  }

  const Program& p_;
  int stages_;
  CommRules rules_;
  // (job, stage, batch, part, parts) -> node ranges of its passes ({-1, -1}: the whole stage)
  using PassKey = std::tuple<int, int, int, int, int>;
  std::map<PassKey, std::vector<std::pair<int, int>>> forward_ranges_, backward_ranges_;
  std::map<std::pair<int, int>, std::vector<const Instruction*>> collectives_;  // (rank, group)
  std::map<Channel, std::vector<Located>> sends_, recvs_;
  using RowsKey = std::tuple<int, int, int, bool>;  // (rank, slot, stage, gradient)
  std::map<RowsKey, int64_t> rows_total_;
  std::map<RowsKey, std::vector<std::pair<int64_t, int64_t>>> rows_in_, rows_out_;
};

}  // namespace

void validate_program(const Program& program, int stage_count, CommRules rules) {
  Checker(program, stage_count, rules).run();
}

}  // namespace wt
