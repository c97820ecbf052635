#include "device/device_context.hpp"

#include <stdexcept>

namespace wt {

DeviceKind parse_device_kind(const std::string& name) {
  if (name == "host") return DeviceKind::Host;
  if (name == "strict") return DeviceKind::Strict;
  throw std::invalid_argument("unknown device kind '" + name + "' (host or strict)");
}

const char* device_kind_name(DeviceKind kind) {
  return kind == DeviceKind::Strict ? "strict" : "host";
}

namespace {
std::unique_ptr<StrictStreams> make_queues(DeviceKind kind, uint64_t seed) {
  if (kind != DeviceKind::Strict) return nullptr;
  return std::make_unique<StrictStreams>(seed);
}
}  // namespace

DeviceContext::DeviceContext(size_t memory_limit, DeviceKind kind, uint64_t seed)
    : kind_(kind),
      strict_(make_queues(kind, seed)),
      allocator_(memory_limit,
                 strict_ ? static_cast<StreamEvents*>(strict_.get()) : &host_events_) {
  allocator_.set_device_only(kind == DeviceKind::Strict);
}

const OpsBackend& DeviceContext::ops(int stream) {
  if (!strict_) return ops_;
  if (stream < 0) throw std::logic_error("negative stream " + std::to_string(stream));
  if (size_t(stream) >= stream_ops_.size()) stream_ops_.resize(size_t(stream) + 1);
  auto& ops = stream_ops_[size_t(stream)];
  if (!ops) ops = std::make_unique<StrictOps>(ops_, *strict_, allocator_, stream);
  return *ops;
}

void DeviceContext::launch(int stream, DeviceWork work) {
  if (strict_) return strict_->launch(stream, std::move(work));
  work.run();
}

}  // namespace wt
