#include "sched/abstract_run.hpp"

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "sched/event_dependencies.hpp"
#include "sched/opcode_traits.hpp"

namespace wt {

namespace {

using RefKey = std::tuple<int, int, size_t>;
RefKey key_of(const InstructionRef& r) { return {r.rank, r.stream, r.index}; }

class AbstractRun {
 public:
  AbstractRun(const Program& p, CommRules rules)
      : p_(p), nccl_(rules == CommRules::Nccl), deps_(event_dependencies(p, rules)) {
    pos_.resize(p.world_size);
    issued_.resize(p.world_size);
    head_.assign(p.world_size, 0);
    for (int r = 0; r < p.world_size; ++r) {
      pos_[r].assign(p.ranks[r].streams.size(), 0);
      order_.push_back(stream_visit_order(p.ranks[r]));
      for (int s = 0; s < static_cast<int>(p.ranks[r].streams.size()); ++s)
        for (size_t i = 0; i < p.ranks[r].streams[s].size(); ++i) {
          const Instruction& ins = p.ranks[r].streams[s][i];
          if (is_communication(ins.op)) own_[{r, ins.event}] = {r, s, i};
        }
    }
  }

  std::string run() {
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (int r = 0; r < p_.world_size; ++r)
        for (int s : order_[r]) progressed = advance(r, s) || progressed;
      if (nccl_) progressed = complete_heads() || progressed;
    }
    std::string stuck;
    for (int r = 0; r < p_.world_size; ++r)
      for (size_t s = 0; s < pos_[r].size(); ++s)
        if (pos_[r][s] < p_.ranks[r].streams[s].size())
          stuck += " [rank " + std::to_string(r) + " stream " + std::to_string(s) + " at " +
                   p_.ranks[r].streams[s][pos_[r][s]].str() + "]";
    return stuck;
  }

 private:
  bool passed(const InstructionRef& d) const { return pos_[d.rank][d.stream] > d.index; }

  // Whether `event` of rank `r` has completed.
  bool complete(int r, int event) const {
    if (nccl_) {
      auto own = own_.find({r, event});
      if (own != own_.end()) return completed_.count(key_of(own->second)) != 0;
    }
    for (const InstructionRef& d : deps_.at({r, event}))
      if (!passed(d)) return false;
    return true;
  }

  // Runs stream s of rank r until it blocks. Under MPI's rules only a Wait blocks; under NCCL's a
  // communication instruction also holds its stream until it completes.
  bool advance(int r, int s) {
    const auto& stream = p_.ranks[r].streams[s];
    bool progressed = false;
    while (pos_[r][s] < stream.size()) {
      const Instruction& ins = stream[pos_[r][s]];
      const OpcodeTraits& traits = opcode_traits(ins.op);
      if (traits.waits_event && !complete(r, ins.event)) break;
      if (nccl_ && traits.op_class == OpClass::Communication) {
        const InstructionRef ref{r, s, pos_[r][s]};
        if (issued_set_.insert(key_of(ref)).second) {
          issued_[r].push_back(ref);
          progressed = true;
        }
        if (!completed_.count(key_of(ref))) break;
      }
      ++pos_[r][s];
      progressed = true;
    }
    return progressed;
  }

  // NCCL: a rank's operations complete in issue order, so only the oldest unfinished one of each
  // rank (its head) can complete, and only together with its partners, each the head of its rank.
  bool complete_heads() {
    bool progressed = false;
    for (int r = 0; r < p_.world_size; ++r) {
      if (head_[r] >= issued_[r].size()) continue;
      const InstructionRef& x = issued_[r][head_[r]];
      const Instruction& ins = p_.ranks[x.rank].streams[x.stream][x.index];
      const auto& partners = deps_.at({r, ins.event});
      bool ready = true;
      for (const InstructionRef& d : partners)
        ready = ready && head_[d.rank] < issued_[d.rank].size() &&
                key_of(issued_[d.rank][head_[d.rank]]) == key_of(d);
      if (!ready) continue;
      for (const InstructionRef& d : partners) {
        completed_.insert(key_of(d));
        ++head_[d.rank];
      }
      progressed = true;
    }
    return progressed;
  }

  const Program& p_;
  const bool nccl_;
  const std::map<std::pair<int, int>, std::vector<InstructionRef>> deps_;
  std::vector<std::vector<size_t>> pos_;
  std::vector<std::vector<int>> order_;
  std::map<std::pair<int, int>, InstructionRef> own_;  // (rank, event) -> its communication
  // NCCL: each rank's communication in issue order, the index of its oldest unfinished one.
  std::vector<std::vector<InstructionRef>> issued_;
  std::vector<size_t> head_;
  std::set<RefKey> issued_set_, completed_;
};

}  // namespace

std::string find_stuck_streams(const Program& program, CommRules rules) {
  return AbstractRun(program, rules).run();
}

}  // namespace wt
