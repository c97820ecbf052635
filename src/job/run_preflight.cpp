#include "job/run_preflight.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "io/checked_file.hpp"
#ifdef WAVETRAIN_HAVE_CUDA
#include "comm/node_ranks.hpp"
#include "device/cuda/gpu_probe.hpp"
#include "device/device_context.hpp"
#include "device/gpu_assignment.hpp"
#endif
#include "util/input_error.hpp"

namespace wt {

// The run directory exists (created if missing) and is a directory.
void create_run_directory(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    throw InputError(
        dir, 0, "run directory",
        error ? "cannot create it: " + error.message() : "exists but is not a directory");
}

// A file the run writes later must not be a directory or unwritable: found now, not after hours.
void check_writable_file(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) return;
  if (!std::filesystem::is_regular_file(status))
    throw InputError(path, 0, "run directory",
                     "is not a regular file, and the run writes a file of this name");
  if (::access(path.c_str(), W_OK) != 0)
    throw InputError(path, 0, "run directory",
                     std::string("cannot write it: ") + std::strerror(errno));
}

void write_file_checked(const std::string& path, const std::string& contents) {
  check_writable_file(path);
  try {
    write_file_atomically(path, contents);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "run directory", e.what());
  }
}

void check_data_against_deck(const RunConfig& cfg, const Graph& graph, const DatasetReader& train,
                             const DatasetReader& test) {
  if (train.size() == 0)
    throw InputError(cfg.data.path, 0, "/" + train.split() + "/inputs",
                     "the training split has no samples");
  if (cfg.train.global_batch > train.size())
    throw InputError(cfg.deck_path, 0, "train.global_batch",
                     std::to_string(cfg.train.global_batch) +
                         " is larger than the training split's " + std::to_string(train.size()) +
                         " samples (" + cfg.data.path + " /" + train.split() + ")");
  // A classifier's outputs are the dataset's classes. A token model may have a larger vocabulary
  // than one text uses (a subset of its characters), never a smaller one.
  for (const DatasetReader* r : {&train, &test})
    if (r->declared_classes() > 0 && (r->token_ids() ? r->declared_classes() > graph.classes
                                                     : r->declared_classes() != graph.classes))
      throw InputError(cfg.model.file, 0, "model.classes",
                       "the model has " + std::to_string(graph.classes) + " classes, the dataset " +
                           cfg.data.path + " has " + std::to_string(r->declared_classes()) +
                           " (its num_classes attribute)");
  const int64_t per_epoch = train.size() / cfg.train.global_batch;
  if (cfg.train.epochs > std::numeric_limits<int64_t>::max() / std::max<int64_t>(per_epoch, 1))
    throw InputError(cfg.deck_path, 0, "train.epochs",
                     std::to_string(cfg.train.epochs) + " epochs of " + std::to_string(per_epoch) +
                         " steps is more steps than can be counted");
}

void check_labels_per_sample(const RunConfig& cfg, const Graph& graph, const DatasetReader& split) {
  const int64_t needed = graph.nodes.back().layer->labels_per_sample();
  if (split.labels_per_sample() != needed)
    throw InputError(cfg.data.path, 0, "/" + split.split() + "/labels",
                     "has " + std::to_string(split.labels_per_sample()) +
                         " label(s) per sample, but the model's loss layer '" +
                         graph.nodes.back().name + "' needs " + std::to_string(needed));
}

std::string describe_classes(const DatasetReader& split) {
  const auto& names = split.class_names();
  const int64_t classes =
      split.declared_classes() > 0 ? split.declared_classes() : int64_t(names.size());
  std::string text = std::to_string(classes) + " classes";
  if (names.empty() || split.token_ids()) return text;  // a text's vocabulary: too long to list
  const size_t shown = std::min<size_t>(names.size(), 12);
  for (size_t i = 0; i < shown; ++i) text += (i ? ", " : ": ") + names[i];
  if (shown < names.size()) text += ", ...";
  return text;
}

void check_keys_the_schedule_reads(const RunConfig& cfg) {
  if (cfg.schedule.kind == "burst") return;
  for (const auto& [key, origin] : cfg.key_origins)
    if (key.rfind("burst.", 0) == 0)
      throw deck_error(cfg, key,
                       "only schedule.kind = \"burst\" reads [burst] keys, but the schedule is \"" +
                           cfg.schedule.kind + "\": remove the key or choose the burst schedule");
}

#ifdef WAVETRAIN_HAVE_CUDA
namespace {

std::string visible_devices() {
  const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
  return value ? std::string("\"") + value + "\"" : "unset";
}

// The GPU each of this node's ranks would drive, by UUID ("none" where a rank sees no GPU).
// Collective: every rank of the job calls it, GPU or not, so that the node's ranks stay in step.
NodeRanks gpus_on_node(const cuda::GpuProbe& gpus) {
  const NodeRanks node = gather_on_node("");
  std::string mine = "none";
  if (gpus.count > 0) mine = cuda::gpu_uuid(gpu_for_local_rank(node.local_rank, gpus.count));
  return gather_on_node(mine);
}

}  // namespace
#endif

GpuPlacement place_on_gpu(const RunConfig& cfg) {
  const std::string instead = "use \"auto\", \"cpu\", \"host\" or \"strict\"";
#ifdef WAVETRAIN_HAVE_CUDA
  const cuda::GpuProbe gpus = cuda::probe_gpus();
  const NodeRanks node = gpus_on_node(gpus);
  if (gpus.count == 0)
    throw deck_error(cfg, "device.kind",
                     "'cuda': this build has CUDA, but this rank sees no GPU (" + gpus.why_none +
                         "; CUDA_VISIBLE_DEVICES=" + visible_devices() + "): " + instead);
  const GpuSharing sharing = find_sharing(node.gathered);
  if (sharing.any() && !cfg.device.share_gpus)
    throw deck_error(cfg, "device.kind",
                     "'cuda': " + std::to_string(node.local_ranks) + " ranks on node " + node.node +
                         " see " + std::to_string(gpus.count) + " GPU(s), and " +
                         describe_sharing(sharing, node.node) +
                         ": start one rank per GPU, or set device.share_gpus = true");
  GpuPlacement placement;
  placement.gpu = gpu_for_local_rank(node.local_rank, gpus.count);
  placement.shared = sharing.any();
  placement.name = gpus.first_name;
  return placement;
#else
  throw deck_error(cfg, "device.kind",
                   "'cuda' needs wavetrain built with CUDA (cmake -DWAVETRAIN_CUDA=ON, with the "
                   "CUDA toolkit, cuBLAS, cuDNN and NCCL), which this build is not: " +
                       instead);
#endif
}

std::string resolve_device_kind(const RunConfig& cfg, std::string* why) {
  if (cfg.device.kind != "auto") return cfg.device.kind;
#ifdef WAVETRAIN_HAVE_CUDA
  const cuda::GpuProbe gpus = cuda::probe_gpus();
  const NodeRanks node = gpus_on_node(gpus);
  const int mine = gpus.count > 0 && !find_sharing(node.gathered).any() ? 1 : 0;
  int all = mine, initialized = 0;
  MPI_Initialized(&initialized);  // tools and tests without MPI: this process is the job
  if (initialized) MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    *why = "one GPU per rank (" + gpus.first_name + ")";
    return "cuda";
  }
  *why = gpus.count == 0 ? "no GPU visible: " + gpus.why_none
                         : "a node has more ranks than GPUs (device.kind = \"cuda\" with "
                           "device.share_gpus = true shares them)";
  return "host";
#else
  *why = "a build without CUDA";
  return "host";
#endif
}

void check_device_kind(const RunConfig& cfg) {
  if (cfg.device.kind == "cuda") (void)place_on_gpu(cfg);
}

void check_precision(const RunConfig& cfg) {
  // A GPU: cuBLAS and cuDNN report an unsupported bf16 (before sm_80) when first called.
  if (cfg.device.kind == "cuda") return;
  const DeviceKind kind = cfg.device.kind == "strict" ? DeviceKind::Strict : DeviceKind::Host;
  const std::string why = precision_unsupported(kind, parse_precision(cfg.train.precision));
  if (!why.empty())
    throw deck_error(cfg, "train.precision",
                     "\"" + cfg.train.precision + "\" on device.kind = \"" + cfg.device.kind +
                         "\" " + why + ": use \"fp32\"");
}

void check_program_batches(const RunConfig& cfg, const Program& program) {
  int parts = 1;
  for (const RankProgram& rank : program.ranks)
    for (const auto& stream : rank.streams)
      for (const Instruction& ins : stream)
        if (ins.op == OpCode::LoadBatch) parts = std::max(parts, ins.parts);
  if (cfg.train.global_batch < parts)
    throw InputError(cfg.deck_path, 0, "train.global_batch",
                     std::to_string(cfg.train.global_batch) + " samples cannot be cut into the " +
                         std::to_string(parts) + " parts the '" + cfg.schedule.kind +
                         "' schedule loads per batch (one per rank or microbatch): use at least " +
                         std::to_string(parts));
}

}  // namespace wt
