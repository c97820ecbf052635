// burst: DeepPool's burst parallelism (seeds/deeppool.txt §3-4). The model is cut into segments
// (the stages), segment s runs data-parallel on ranks 0..g_s-1 (ScheduleInput::stage_ranks, the
// burst planner's choice), and the batch's rows move between segments by the sticky layout
// (sched/burst_layout.hpp): forward, each boundary's activation rows go to the ranks of the next
// segment; backward, their gradients come back to the rows' previous owners. Each segment's
// gradients are summed over its own ranks in gang's buckets, overlapped with its backward, and
// every rank of the segment steps it. Ranks beyond a segment's count never name it.
//
// One segment on every rank is gang, instruction for instruction.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "sched/burst_layout.hpp"
#include "sched/gradient_buckets.hpp"
#include "sched/program_builder.hpp"
#include "sched/schedule_registry.hpp"

namespace wt {

namespace {

class BurstBuilder {
 public:
  explicit BurstBuilder(const ScheduleInput& in) : in_(in), stages_(int(in.stages.size())) {
    check_input();
    p_.schedule = "burst";
    p_.world_size = in.world_size;
    p_.groups.push_back(build::world_group(in.world_size));
    for (int s = 0; s < stages_; ++s) {
      const int g = in.stage_ranks[size_t(s)];
      layouts_.push_back(s == 0 ? contiguous_layout(in.global_batch, g)
                                : sticky_layout(layouts_.back(), g));
      runs_.push_back(s == 0 ? std::vector<RowRun>{}
                             : layout_transfers(layouts_[size_t(s) - 1], layouts_.back()));
      group_.push_back(g > 1 ? group_of(g) : -1);  // one rank sums nothing
    }
  }

  Program build() {
    for (int r = 0; r < in_.world_size; ++r) p_.ranks.push_back(RankProgram{{rank_program(r)}});
    return p_;
  }

 private:
  void check_input() const {
    if (in_.stage_ranks.size() != in_.stages.size())
      throw std::invalid_argument("burst needs a rank count for each of its " +
                                  std::to_string(in_.stages.size()) + " stages, given " +
                                  std::to_string(in_.stage_ranks.size()));
    for (int g : in_.stage_ranks)
      if (g < 1 || g > in_.world_size)
        throw std::invalid_argument("a burst stage on " + std::to_string(g) + " ranks, of " +
                                    std::to_string(in_.world_size));
  }

  // The group of ranks 0..g-1: the world, or one made for it in order of first use.
  int group_of(int g) {
    if (g == in_.world_size) return 0;
    for (size_t k = 1; k < p_.groups.size(); ++k)
      if (int(p_.groups[k].size()) == g) return int(k);
    p_.groups.push_back(build::world_group(g));
    return int(p_.groups.size()) - 1;
  }

  int count(int s) const { return in_.stage_ranks[size_t(s)]; }
  bool runs(int r, int s) const { return r < count(s); }

  std::vector<Instruction> rank_program(int r) {
    std::vector<Instruction> list;
    int events = 0;
    std::vector<int> later;  // events waited for at the end (sends, allreduces)
    if (runs(r, 0)) list.push_back(build::load(0, 0, r, count(0)));
    if (stages_ > 1 && runs(r, stages_ - 1)) add_label_loads(r, list);
    for (int s = 0; s < stages_; ++s) {
      if (s > 0) move_rows(r, s, false, list, events, later);
      if (runs(r, s)) {
        Instruction fwd{OpCode::Forward};
        fwd.stage = s;
        fwd.slot = 0;
        list.push_back(fwd);
      }
    }
    for (int s = stages_ - 1; s >= 0; --s) {
      if (runs(r, s)) add_backward(s, list, events, later);
      if (s > 0) move_rows(r, s, true, list, events, later);
    }
    for (int e : later) list.push_back(build::wait(e));
    for (int s = 0; s < stages_; ++s)
      if (runs(r, s)) list.push_back(build::step(s));
    p_.events = std::max(p_.events, events);
    return list;
  }

  // The loss's labels: one labels-only read per run of consecutive samples the rank holds in the
  // last segment (its rows, in order), nothing read and dropped.
  void add_label_loads(int r, std::vector<Instruction>& list) const {
    const std::vector<int64_t>& mine = layouts_.back().samples[size_t(r)];
    for (size_t k = 0; k < mine.size();) {
      size_t end = k + 1;
      while (end < mine.size() && mine[end] == mine[end - 1] + 1) ++end;
      Instruction load = build::load(0, 0, r, count(stages_ - 1), true);
      load.sample_begin = mine[k];
      load.rows = int64_t(end - k);
      list.push_back(load);
      k = end;
    }
  }

  // The rows of boundary s (the input of stage s) this rank sends, receives or copies; forward
  // from layout s-1 to layout s, backward (gradient) the other way. Receives are waited for here,
  // sends at the end of the step.
  void move_rows(int r, int s, bool gradient, std::vector<Instruction>& list, int& events,
                 std::vector<int>& later) const {
    std::vector<int> received;
    const int64_t per_sample = in_.stages[size_t(s)].in_bytes_per_sample;
    const int64_t total = in_.global_batch / count(gradient ? s - 1 : s);
    for (const RowRun& run : runs_[size_t(s)]) {
      // Forward rows go from_rank -> to_rank; their gradients come back.
      const int src = gradient ? run.to_rank : run.from_rank;
      const int dst = gradient ? run.from_rank : run.to_rank;
      const int64_t src_row = gradient ? run.to_row : run.from_row;
      const int64_t dst_row = gradient ? run.from_row : run.to_row;
      if (src != r && dst != r) continue;
      Instruction i{src == dst ? OpCode::CopyRows : src == r ? OpCode::SendRows : OpCode::RecvRows};
      i.stage = s;
      i.slot = 0;
      i.batch = 0;
      i.gradient = gradient;
      i.rows = run.count;
      i.total_rows = total;
      i.sample_begin = run.first_sample;
      i.row_begin = i.op == OpCode::RecvRows ? dst_row : src_row;
      i.to_row = i.op == OpCode::CopyRows ? dst_row : 0;
      // The receiving side's part: the validator's identity of the re-laid input.
      i.part = dst;
      i.parts = count(gradient ? s - 1 : s);
      i.bytes = run.count * per_sample;
      if (i.op != OpCode::CopyRows) {
        i.peer = src == r ? dst : src;
        // A pair's runs at one boundary share the tag: MPI matches them in issue order.
        i.tag = s * 2 + (gradient ? 1 : 0);
        i.event = events++;
        (i.op == OpCode::RecvRows ? received : later).push_back(i.event);
      }
      list.push_back(i);
    }
    for (int e : received) list.push_back(build::wait(e));
  }

  // Gang's bucketed backward of stage s, each bucket's allreduce over the stage's ranks.
  void add_backward(int s, std::vector<Instruction>& list, int& events,
                    std::vector<int>& later) const {
    const StageInfo& stage = in_.stages[size_t(s)];
    for (const auto& [b, e] :
         gradient_buckets(stage, std::max<int64_t>(1, in_.deck.bucket_bytes))) {
      Instruction bwd{OpCode::Backward};
      bwd.stage = s;
      bwd.slot = 0;
      bwd.node_begin = b;
      bwd.node_end = e;
      list.push_back(bwd);
      if (count(s) == 1) continue;
      Instruction ar{OpCode::AllReduce};
      ar.stage = s;
      ar.node_begin = b;
      ar.node_end = e;
      ar.group = group_[size_t(s)];
      ar.event = events++;
      later.push_back(ar.event);
      list.push_back(ar);
    }
  }

  const ScheduleInput& in_;
  const int stages_;
  Program p_;
  std::vector<SampleLayout> layouts_;      // per stage: which samples each of its ranks holds
  std::vector<std::vector<RowRun>> runs_;  // per stage s > 0: layout s-1 -> layout s
  std::vector<int> group_;                 // per stage: its ranks' group
};

Program generate_burst(const ScheduleInput& in) { return BurstBuilder(in).build(); }

}  // namespace

WT_REGISTER_SCHEDULE("burst", generate_burst);

}  // namespace wt
