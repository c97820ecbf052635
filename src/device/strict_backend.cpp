#include "device/strict_backend.hpp"

#include <stdexcept>
#include <string>

namespace wt {

std::unique_ptr<ProgramEvents> make_strict_program_events(StrictStreams& queues,
                                                          const OpsBackend& kernels, int count,
                                                          int first_id);

const OpsBackend& StrictBackend::ops(int stream) {
  if (stream < 0) throw std::logic_error("negative stream " + std::to_string(stream));
  if (!memory_) throw std::logic_error("the strict device's kernels before its allocator");
  if (size_t(stream) >= stream_ops_.size()) stream_ops_.resize(size_t(stream) + 1);
  auto& ops = stream_ops_[size_t(stream)];
  if (!ops) ops = std::make_unique<StrictOps>(kernels_, queues_, *memory_, stream);
  return *ops;
}

void StrictBackend::run_on_device(const std::function<void()>& work,
                                  const std::function<bool()>& progress) {
  queues_.launch(0, DeviceWork{work, nullptr, false});
  queues_.drain(progress);
}

std::unique_ptr<ProgramEvents> StrictBackend::program_events(int count, void*) {
  const int first = next_event_id_;
  next_event_id_ += count;
  return make_strict_program_events(queues_, kernels_, count, first);
}

}  // namespace wt
