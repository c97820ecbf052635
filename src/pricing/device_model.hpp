#pragma once
// What pricing knows about a device and its links (for the simulator and the planners alike):
// enough to price a layer analytically (roofline: FLOPs at an achievable rate, or bytes at memory
// bandwidth, whichever is slower) and a message as alpha + bytes / beta, with one (alpha, beta)
// inside a node and one between nodes. Built-in: v100 (DGX-1, NVLink), a100 (DGX A100), h100 (DGX
// H100); anything else is a TOML file with the same keys (see bench/devices/*.toml and
// docs/schedules.md, "Simulating a schedule").
#include <cstdint>
#include <string>

namespace wt {

struct DeviceModel {
  std::string name;
  double peak_flops = 0;        // FP32 FLOP/s the layers' arithmetic runs at, at best
  double efficiency = 0.5;      // fraction of peak_flops large GEMMs reach
  double memory_bandwidth = 0;  // bytes/s
  double launch_s = 0;          // fixed cost per layer pass (kernel launches, dispatch)
  int64_t memory_bytes = 0;     // device memory (reported against the simulated peak)
  int ranks_per_node = 1;       // devices per node: which links are intra-node
  double intra_alpha_s = 0, intra_bytes_per_s = 0;  // one message inside a node
  double inter_alpha_s = 0, inter_bytes_per_s = 0;  // one message between nodes
  // A host rank copies messages with the same core that computes (shared memory, no DMA engine):
  // communication then occupies the rank's compute instead of running beside it.
  bool comm_uses_compute = false;
};

// "v100", "a100", "h100", or a path to a TOML device file. Throws InputError naming the file,
// line and key for a bad file, or "--device" for an unknown name.
DeviceModel load_device_model(const std::string& name_or_path);

// The machine a run is on, for planning it: layer times come from its measured profile (so the
// roofline figures are placeholders), every link is the one measured between ranks 0 and 1, and
// communication occupies the compute core (a host rank).
DeviceModel measured_machine(double link_alpha_s, double link_bytes_per_s, int ranks,
                             int64_t memory_bytes);

// The built-in names, for --help and error messages.
const char* builtin_device_names();

}  // namespace wt
