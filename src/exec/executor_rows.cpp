// The executor's burst instructions: rows of a stage boundary's tensor moved between the layouts
// of two neighbouring segments (sched/burst.cpp). Forward, the rows of the previous stage's output
// go into the stage's re-laid input; backward, the rows of that input's gradient go back into the
// previous stage's output gradient. The receiving tensor is allocated by its first piece and the
// pieces tile it (validate_program checks).
#include <stdexcept>
#include <string>

#include "exec/executor.hpp"
#include "exec/executor_slot.hpp"

namespace wt {

const int64_t* Executor::samples_of(const Slot& slot, int stage) const {
  const std::vector<int64_t>& rows = slot.stage_samples[size_t(stage)];
  return rows.empty() ? nullptr : rows.data();
}

void Executor::execute_rows(const Instruction& ins) {
  Slot& slot = *slots_[ins.slot];
  const int boundary = model_.stages[ins.stage].node_begin - 1;  // whose output moves
  const Shape& sample = model_.graph.nodes[boundary].out_shape;
  const int64_t per_row = shape_numel(sample);
  Tensor& source = ins.gradient ? slot.relaid_grad[boundary] : slot.out[boundary];
  Tensor& target = ins.gradient ? slot.grad[boundary] : slot.relaid_out[boundary];
  auto fail = [&](const std::string& why) {
    throw std::logic_error("schedule '" + program_.schedule + "' rank " + std::to_string(rank_) +
                           ": " + ins.str() + ": " + why);
  };
  if (ins.op != OpCode::RecvRows) {  // reads rows of the source
    if (!source.defined()) fail("nothing to send: the tensor is not on this rank");
    if (ins.row_begin < 0 || (ins.row_begin + ins.rows) * per_row > source.numel())
      fail("rows beyond the tensor's " + std::to_string(source.numel() / per_row));
  }
  if (ins.op != OpCode::SendRows) {  // writes rows of the target, allocated by its first piece
    if (!target.defined()) {
      Shape shape{ins.total_rows};
      shape.insert(shape.end(), sample.begin(), sample.end());
      target = Tensor::empty(shape, model_.allocator(), current_stream_);
    }
    if (!ins.gradient) {  // the stage's rows are these samples of the batch
      std::vector<int64_t>& positions = slot.stage_samples[size_t(ins.stage)];
      positions.resize(size_t(ins.total_rows));
      const int64_t first = ins.op == OpCode::CopyRows ? ins.to_row : ins.row_begin;
      for (int64_t k = 0; k < ins.rows; ++k) positions[size_t(first + k)] = ins.sample_begin + k;
    }
  }
  const int64_t count = ins.rows * per_row;
  if (ins.op != OpCode::CopyRows && ins.bytes != count * int64_t(sizeof(float)))
    fail("but the rows hold " + std::to_string(count * int64_t(sizeof(float))) + " bytes");
  switch (ins.op) {
    case OpCode::SendRows:
      comm_touches(ins, source.device_ptr() + ins.row_begin * per_row, count, false);
      start(ins.event, send(source.device_ptr() + ins.row_begin * per_row, count, ins), {source});
      break;
    case OpCode::RecvRows:
      comm_touches(ins, target.device_ptr() + ins.row_begin * per_row, count, true);
      start(ins.event, receive(target.device_ptr() + ins.row_begin * per_row, count, ins),
            {target});
      break;
    case OpCode::CopyRows:  // x 1.0f: an exact copy on every backend
      ops().scale(source.device_ptr() + ins.row_begin * per_row, 1.0f,
                  target.device_ptr() + ins.to_row * per_row, count);
      break;
    default:
      throw std::logic_error("execute_rows: not a rows instruction");
  }
}

}  // namespace wt
