#include "job/device_options.hpp"

namespace wt {

DeviceOptions device_options(const RunConfig& cfg, int rank, int gpu) {
  DeviceOptions o;
  o.kind = cfg.device.kind == "strict" ? DeviceKind::Strict
           : cfg.device.kind == "cuda" ? DeviceKind::Cuda
                                       : DeviceKind::Host;
  o.memory_limit = static_cast<size_t>(cfg.device.memory_limit);
  o.strict_seed = static_cast<uint64_t>(cfg.device.strict_seed + rank);
  o.gpu = gpu;
  o.tf32 = cfg.device.tf32;
  o.precision = parse_precision(cfg.train.precision);
  o.conv_algorithm = parse_conv_algorithm(cfg.device.conv_algorithm);
  return o;
}

}  // namespace wt
