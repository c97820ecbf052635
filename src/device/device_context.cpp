#include "device/device_context.hpp"

#include <stdexcept>

#include "device/host_backend.hpp"
#include "device/strict_backend.hpp"
#include "ops/host/bf16.hpp"
#ifdef WAVETRAIN_HAVE_CUDA
#include "device/cuda/cuda_backend.hpp"
#endif

namespace wt {

DeviceKind parse_device_kind(const std::string& name) {
  if (name == "host") return DeviceKind::Host;
  if (name == "strict") return DeviceKind::Strict;
  if (name == "cuda") return DeviceKind::Cuda;
  throw std::invalid_argument("unknown device kind '" + name + "' (host, strict or cuda)");
}

const char* device_kind_name(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Strict:
      return "strict";
    case DeviceKind::Cuda:
      return "cuda";
    case DeviceKind::Host:
      break;
  }
  return "host";
}

std::string precision_unsupported(DeviceKind kind, Precision precision) {
  if (precision != Precision::Bf16 || kind == DeviceKind::Cuda || ops::host_computes_bf16())
    return "";
  return std::string("needs a CPU with bf16 arithmetic (AVX512-BF16 or AMX), but oneDNN runs ") +
         ops::host_cpu_isa_name() + " here, where bf16 would be emulated and slower than FP32";
}

namespace {

std::unique_ptr<DeviceBackend> make_backend(const DeviceOptions& o, size_t* memory_limit) {
  switch (o.kind) {
    case DeviceKind::Host:
      return std::make_unique<HostBackend>(o.precision, o.conv_algorithm);
    case DeviceKind::Strict:
      return std::make_unique<StrictBackend>(o.strict_seed, o.precision, o.conv_algorithm);
    case DeviceKind::Cuda:
#ifdef WAVETRAIN_HAVE_CUDA
      return cuda::make_cuda_backend(o.gpu, o.tf32, o.precision, memory_limit);
#else
      (void)memory_limit;
      throw std::invalid_argument(
          "device kind 'cuda' needs wavetrain built with CUDA (cmake -DWAVETRAIN_CUDA=ON)");
#endif
  }
  throw std::logic_error("unknown device kind");
}

DeviceOptions options_of(size_t memory_limit, DeviceKind kind, uint64_t seed) {
  DeviceOptions o;
  o.kind = kind;
  o.memory_limit = memory_limit;
  o.strict_seed = seed;
  return o;
}

}  // namespace

DeviceContext::DeviceContext(size_t memory_limit, DeviceKind kind, uint64_t seed)
    : DeviceContext(options_of(memory_limit, kind, seed)) {}

DeviceContext::DeviceContext(const DeviceOptions& options) : kind_(options.kind) {
  size_t limit = options.memory_limit;
  backend_ = make_backend(options, &limit);
  if (kind_ == DeviceKind::Strict) strict_ = &static_cast<StrictBackend&>(*backend_).queues();
  attach_allocator(limit);
}

DeviceContext::DeviceContext(std::unique_ptr<DeviceBackend> backend, DeviceKind kind,
                             size_t memory_limit)
    : kind_(kind), backend_(std::move(backend)) {
  // The strict device's queues are its own backend's (queues()): only make_backend builds it.
  if (kind_ == DeviceKind::Strict)
    throw std::invalid_argument("DeviceContext: a strict device comes from DeviceOptions");
  attach_allocator(memory_limit);
}

void DeviceContext::attach_allocator(size_t limit) {
  allocator_ = std::make_unique<CachingAllocator>(limit, &backend_->streams());
  allocator_->set_device_only(!backend_->streams().host_addressable());
  allocator_->set_poison_freed(kind_ == DeviceKind::Strict);
  backend_->attach(*allocator_);
}

// The allocator goes first: its cached segments go back through the backend's streams.
DeviceContext::~DeviceContext() { allocator_.reset(); }

}  // namespace wt
