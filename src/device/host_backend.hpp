#pragma once
// The host device (device.kind = "host"): a CPU core, where issuing is executing. Kernels run
// when host code calls them (ops/host/), a Record completes at once, a transfer starts at once
// and the host polls it to completion, and a Wait holds the host until its event has completed.
#include <memory>

#include "device/device_backend.hpp"
#include "ops/host/host_ops.hpp"

namespace wt {

class HostBackend final : public DeviceBackend {
 public:
  explicit HostBackend(Precision precision = Precision::Fp32,
                       ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto)
      : ops_(precision, conv_algorithm) {}
  const char* name() const override { return "host"; }
  DeviceStreams& streams() override { return streams_; }
  const OpsBackend& ops(int) override { return ops_; }
  const OpsBackend& kernels() override { return ops_; }
  void launch(int, DeviceWork work) override { work.run(); }
  void run_on_device(const std::function<void()>& work, const std::function<bool()>&) override {
    work();
  }
  std::unique_ptr<ProgramEvents> program_events(int count, void* comm_stream) override;

 private:
  HostStreams streams_;
  HostOps ops_;
};

}  // namespace wt
