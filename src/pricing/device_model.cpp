#include "pricing/device_model.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "util/input_error.hpp"

namespace wt {

namespace {

// Public vendor figures, FP32 without tensor cores (the executor trains in FP32). Link figures are
// what one rank pair reaches, not the aggregate: DGX-1's hybrid cube mesh gives a V100 pair one or
// two 25 GB/s NVLinks (Wavelet §4 quotes ~25 GB/s per link), NVSwitch systems give every pair the
// full per-GPU bandwidth. Inter-node: one InfiniBand port per GPU.
DeviceModel v100() {
  DeviceModel d;
  d.name = "v100";
  d.peak_flops = 15.7e12;
  d.efficiency = 0.6;
  d.memory_bandwidth = 900e9;
  d.launch_s = 10e-6;
  d.memory_bytes = int64_t(32) << 30;
  d.ranks_per_node = 8;
  d.intra_alpha_s = 10e-6;
  d.intra_bytes_per_s = 25e9;
  d.inter_alpha_s = 20e-6;
  d.inter_bytes_per_s = 12.5e9;  // EDR 100 Gb/s
  return d;
}

DeviceModel a100() {
  DeviceModel d;
  d.name = "a100";
  d.peak_flops = 19.5e12;
  d.efficiency = 0.6;
  d.memory_bandwidth = 1555e9;
  d.launch_s = 8e-6;
  d.memory_bytes = int64_t(40) << 30;
  d.ranks_per_node = 8;
  d.intra_alpha_s = 8e-6;
  d.intra_bytes_per_s = 230e9;  // NVLink 3 through NVSwitch, measured pairwise
  d.inter_alpha_s = 15e-6;
  d.inter_bytes_per_s = 25e9;  // HDR 200 Gb/s
  return d;
}

DeviceModel h100() {
  DeviceModel d;
  d.name = "h100";
  d.peak_flops = 67e12;
  d.efficiency = 0.5;
  d.memory_bandwidth = 3350e9;
  d.launch_s = 6e-6;
  d.memory_bytes = int64_t(80) << 30;
  d.ranks_per_node = 8;
  d.intra_alpha_s = 6e-6;
  d.intra_bytes_per_s = 370e9;  // NVLink 4 through NVSwitch, measured pairwise
  d.inter_alpha_s = 12e-6;
  d.inter_bytes_per_s = 50e9;  // NDR 400 Gb/s
  return d;
}

struct Key {
  const char* name;
  const char* help;
  std::function<void(DeviceModel&, double)> set;
  bool integer = false;
};

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      {"peak_flops", "FP32 FLOP/s", [](DeviceModel& d, double v) { d.peak_flops = v; }},
      {"efficiency", "fraction of peak_flops reached, (0, 1]",
       [](DeviceModel& d, double v) { d.efficiency = v; }},
      {"memory_bandwidth", "bytes/s", [](DeviceModel& d, double v) { d.memory_bandwidth = v; }},
      {"launch_s", "seconds per layer pass", [](DeviceModel& d, double v) { d.launch_s = v; }},
      {"memory_bytes", "device memory, bytes",
       [](DeviceModel& d, double v) { d.memory_bytes = int64_t(v); }, true},
      {"ranks_per_node", "devices per node",
       [](DeviceModel& d, double v) { d.ranks_per_node = int(v); }, true},
      {"intra_alpha_s", "message latency inside a node, s",
       [](DeviceModel& d, double v) { d.intra_alpha_s = v; }},
      {"intra_bytes_per_s", "bandwidth between two ranks of a node",
       [](DeviceModel& d, double v) { d.intra_bytes_per_s = v; }},
      {"inter_alpha_s", "message latency between nodes, s",
       [](DeviceModel& d, double v) { d.inter_alpha_s = v; }},
      {"inter_bytes_per_s", "bandwidth between two ranks on different nodes",
       [](DeviceModel& d, double v) { d.inter_bytes_per_s = v; }},
  };
  return k;
}

DeviceModel load_file(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw InputError(path, static_cast<int>(e.source().begin.line), "",
                     std::string(e.description()));
  }
  DeviceModel d;
  d.name = std::filesystem::path(path).stem().string();
  const std::map<std::string, std::function<DeviceModel()>> bases = {
      {"v100", v100}, {"a100", a100}, {"h100", h100}};
  auto line_of = [](const toml::node& n) { return static_cast<int>(n.source().begin.line); };
  if (const toml::node* base = doc.get("base")) {
    const auto name = base->value<std::string>();
    if (!name || !bases.count(*name))
      throw InputError(path, line_of(*base), "base",
                       std::string("must be one of ") + builtin_device_names());
    const std::string keep = d.name;
    d = bases.at(*name)();
    d.name = keep;
  }
  for (const auto& [key, node] : doc) {
    const std::string k(key.str());
    const int line = line_of(node);
    if (k == "base") continue;
    if (k == "name") {
      if (!node.is_string()) throw InputError(path, line, k, "must be a string");
      d.name = *node.value<std::string>();
      continue;
    }
    if (k == "comm_uses_compute") {
      if (!node.is_boolean()) throw InputError(path, line, k, "must be true or false");
      d.comm_uses_compute = *node.value<bool>();
      continue;
    }
    const Key* found = nullptr;
    for (const Key& c : keys())
      if (k == c.name) found = &c;
    if (!found)
      throw InputError(path, line, k,
                       "unknown key; a device file has base, name, comm_uses_compute and the "
                       "numbers peak_flops, efficiency, memory_bandwidth, launch_s, memory_bytes, "
                       "ranks_per_node, intra_alpha_s, intra_bytes_per_s, inter_alpha_s, "
                       "inter_bytes_per_s");
    const std::optional<double> v = node.value<double>();
    if (!v || !(*v >= 0) || (found->integer && *v != double(int64_t(*v))))
      throw InputError(path, line, k,
                       std::string("must be a non-negative ") +
                           (found->integer ? "integer" : "number") + " (" + found->help + ")");
    found->set(d, *v);
  }
  auto require_positive = [&](const char* k, double v) {
    if (!(v > 0))
      throw InputError(path, 0, k,
                       std::string("must be given and positive (or set base = \"v100\" ") +
                           "and override only what differs)");
  };
  require_positive("peak_flops", d.peak_flops);
  require_positive("efficiency", d.efficiency);
  require_positive("memory_bandwidth", d.memory_bandwidth);
  require_positive("ranks_per_node", d.ranks_per_node);
  require_positive("intra_bytes_per_s", d.intra_bytes_per_s);
  require_positive("inter_bytes_per_s", d.inter_bytes_per_s);
  if (d.efficiency > 1) throw InputError(path, 0, "efficiency", "must be at most 1");
  return d;
}

}  // namespace

const char* builtin_device_names() { return "v100, a100, h100"; }

DeviceModel load_device_model(const std::string& name_or_path) {
  if (name_or_path == "v100") return v100();
  if (name_or_path == "a100") return a100();
  if (name_or_path == "h100") return h100();
  if (!std::filesystem::is_regular_file(name_or_path))
    throw InputError("", 0, "--device",
                     "'" + name_or_path + "' is neither a built-in device (" +
                         builtin_device_names() + ") nor a device file");
  return load_file(name_or_path);
}

DeviceModel measured_machine(double link_alpha_s, double link_bytes_per_s, int ranks,
                             int64_t memory_bytes) {
  DeviceModel machine;
  machine.name = "this machine";
  machine.peak_flops = 1e11;        // unused: every layer time comes from the profile
  machine.memory_bandwidth = 1e10;  // unused by the planners' cost tables
  machine.ranks_per_node = ranks;
  machine.memory_bytes = memory_bytes;
  machine.intra_alpha_s = machine.inter_alpha_s = link_alpha_s;
  machine.intra_bytes_per_s = machine.inter_bytes_per_s = std::max(1.0, link_bytes_per_s);
  machine.comm_uses_compute = true;
  return machine;
}

}  // namespace wt
