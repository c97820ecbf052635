#include "io/checkpoint_file.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "io/checkpoint_format.hpp"
#include "util/file_lock_holder.hpp"
#include "util/hdf5_util.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

using checkpoint_format::fnv1a;
using checkpoint_format::kFormat;
using checkpoint_format::kVersion;

// --- reading -----------------------------------------------------------------------------------

struct Reader {
  std::string path;
  H5Handle file;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(path, 0, key, message);
  }

  H5Handle open_dataset(const std::string& name) const {
    if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0)
      fail(name,
           "missing dataset: the checkpoint is incomplete or was written by a different "
           "model or optimizer");
    H5Handle ds(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!ds.valid()) fail(name, "cannot open dataset (corrupted file?)");
    return ds;
  }

  std::vector<hsize_t> dims(hid_t ds) const {
    H5Handle space(H5Dget_space(ds), H5Sclose);
    int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> d(std::max(rank, 0));
    if (rank > 0) H5Sget_simple_extent_dims(space.get(), d.data(), nullptr);
    return d;
  }

  // Reads all of `name` as `mem_type` into out (bytes_each per element) and verifies checksum
  // (of the whole dataset, or of per-row checksums when rows > 0).
  void read_checked(const std::string& name, hid_t mem_type, void* out, size_t bytes,
                    int64_t rows) const {
    H5Handle ds = open_dataset(name);
    if (bytes > 0 && H5Dread(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      fail(name, "cannot read dataset (truncated or corrupted file)");
    int64_t stored = 0;
    try {
      if (!h5_read_attr_int(ds.get(), "checksum", &stored))
        fail(name, "checksum attribute missing");
    } catch (const std::runtime_error& e) {
      fail(name, std::string("checksum attribute unreadable: ") + e.what());
    }
    uint64_t sum;
    if (rows > 0) {
      std::vector<uint64_t> sums(rows);
      const size_t row_bytes = bytes / size_t(rows);
      for (int64_t r = 0; r < rows; ++r)
        sums[r] = fnv1a(static_cast<const char*>(out) + r * row_bytes, row_bytes);
      sum = fnv1a(sums.data(), sums.size() * 8);
    } else {
      sum = fnv1a(out, bytes);
    }
    if (int64_t(sum) != stored)
      fail(name, "checksum mismatch: the data is corrupted; use an older checkpoint");
  }

  void read_floats(const std::string& name, std::vector<float>& out, int64_t expect) const {
    H5Handle ds = open_dataset(name);
    std::vector<hsize_t> d = dims(ds.get());
    if (d.size() != 1 || int64_t(d[0]) != expect)
      fail(name, "has " + std::to_string(d.empty() ? 0 : d[0]) +
                     " values, the deck's model needs " + std::to_string(expect) +
                     ": the checkpoint is of a different model");
    out.resize(expect);
    read_checked(name, H5T_NATIVE_FLOAT, out.data(), out.size() * sizeof(float), 0);
  }

  int64_t int_attr(hid_t obj, const char* name) const {
    int64_t v = 0;
    try {
      if (!h5_read_attr_int(obj, name, &v)) fail(name, "attribute missing");
    } catch (const std::runtime_error& e) {
      fail(name, e.what());
    }
    return v;
  }

  std::vector<int64_t> int_array_attr(hid_t obj, const char* name) const {
    if (H5Aexists(obj, name) <= 0) fail(name, "attribute missing");
    H5Handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
    H5Handle space(attr.valid() ? H5Aget_space(attr.get()) : -1, H5Sclose);
    const hssize_t n = space.valid() ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (n < 0) fail(name, "unreadable attribute (corrupted file?)");
    std::vector<int64_t> v(static_cast<size_t>(n));
    if (n > 0 && H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()) < 0)
      fail(name, "unreadable attribute (corrupted file?)");
    return v;
  }

  std::string string_attr(hid_t obj, const char* name) const {
    std::string v;
    try {
      if (!h5_read_attr_string(obj, name, &v)) fail(name, "attribute missing");
    } catch (const std::runtime_error& e) {
      fail(name, e.what());
    }
    return v;
  }
};

Reader open_reader(const std::string& path) {
  hdf5_silence_errors();
  Reader r{path, {}};
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw InputError(path, 0, "", "not an HDF5 file (missing, truncated or corrupted checkpoint)");
  r.file = H5Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!r.file.valid()) {
    // HDF5 cannot open a file another process has open for writing (its file lock); that is
    // no damage, and whoever resumes must not skip it as if it were.
    const std::string holder = conflicting_lock_holder(path);
    if (!holder.empty()) throw CheckpointLockedError(path, holder);
  }
  if (!r.file.valid())
    throw InputError(path, 0, "", "cannot open the checkpoint (truncated or corrupted file)");
  return r;
}

}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Reader r = open_reader(path);
  hid_t f = r.file.get();
  std::string format;
  try {
    h5_read_attr_string(f, "format", &format);
  } catch (const std::runtime_error&) {
  }
  if (format != kFormat) r.fail("format", "not a wavetrain checkpoint");
  const int64_t version = r.int_attr(f, "version");
  if (version < checkpoint_format::kOldestReadable || version > kVersion)
    r.fail("version", "checkpoint format version " + std::to_string(version) +
                          " is not supported (this build reads versions " +
                          std::to_string(checkpoint_format::kOldestReadable) + " to " +
                          std::to_string(kVersion) + ")");
  CheckpointInfo info;
  info.step = r.int_attr(f, "step");
  info.global_batch = r.int_attr(f, "global_batch");
  info.batches_per_epoch = r.int_attr(f, "batches_per_epoch");
  info.world_size = int(r.int_attr(f, "world_size"));
  info.seed = uint64_t(r.int_attr(f, "seed"));
  info.schedule = r.string_attr(f, "schedule");
  info.model = r.string_attr(f, "model");
  info.optimizer = r.string_attr(f, "optimizer");
  const int64_t stages = r.int_attr(f, "stages");
  int64_t replicas = 1;  // absent: one replica (files of single-replica schedules)
  if (H5Aexists(f, "replicas") > 0) replicas = r.int_attr(f, "replicas");
  info.replicas = int(replicas);
  info.cuts = r.int_array_attr(f, "cuts");
  if (H5Aexists(f, "stage_ranks") > 0) info.stage_ranks = r.int_array_attr(f, "stage_ranks");
  if (version >= 3) {
    info.run_id = r.string_attr(f, "run_id");
    info.run_dir = r.string_attr(f, "run_dir");
  }
  // Before any value is trusted: an edited or damaged header is a damaged checkpoint.
  info.header_verified = version >= 2;
  if (info.header_verified && uint64_t(r.int_attr(f, "header_checksum")) !=
                                  checkpoint_format::header_checksum(info, version, stages))
    r.fail("header_checksum",
           "checksum mismatch: the root attributes (step, seed, world_size, cuts, ...) were "
           "changed or damaged after the checkpoint was written");
  if (replicas < 1) r.fail("replicas", "header values out of range (corrupted file)");
  if (info.step < 0 || info.world_size < 1 || stages < 1)
    r.fail("step", "header values out of range (corrupted file)");
  for (int64_t s = 0; s < stages; ++s) {
    H5Handle ds = r.open_dataset("/stages/" + std::to_string(s) + "/values");
    std::vector<hsize_t> d = r.dims(ds.get());
    info.stage_params.push_back(d.size() == 1 ? int64_t(d[0]) : -1);
  }
  H5Handle deck = r.open_dataset("deck");
  std::vector<hsize_t> d = r.dims(deck.get());
  info.deck_toml.resize(d.size() == 1 ? d[0] : 0);
  r.read_checked("deck", H5T_NATIVE_UINT8, info.deck_toml.data(), info.deck_toml.size(), 0);
  return info;
}

namespace {

// Loads one replica's stages from `prefix` ("" or "/replicas/<w>"); optimizer key key_base + s.
void load_stages(const Reader& r, const CheckpointInfo& info, const std::string& prefix,
                 Model& model, Optimizer* optimizer, int key_base, int rank) {
  std::vector<float> scratch;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    Stage& st = model.stages[s];
    const int key = key_base + int(s);
    const std::string base = prefix + "/stages/" + std::to_string(s);
    r.read_floats(base + "/values", scratch, st.param_count());  // checked even when not kept
    // A stage this rank does not hold (borrowed from its owner) gets the owner's values by
    // Broadcast when it is next needed.
    if (st.values.defined()) st.values.copy_from_host(scratch.data());

    const int64_t nb = st.buffer_values.defined() ? st.buffer_values.numel() : 0;
    H5Handle bds = r.open_dataset(base + "/buffers");
    std::vector<hsize_t> bd = r.dims(bds.get());
    if (bd.size() != 2 || int64_t(bd[1]) != nb || int64_t(bd[0]) != info.world_size)
      r.fail(base + "/buffers", "shape does not match the deck's model (" + std::to_string(nb) +
                                    " buffer values per rank)");
    scratch.resize(bd[0] * bd[1]);
    r.read_checked(base + "/buffers", H5T_NATIVE_FLOAT, scratch.data(), scratch.size() * 4,
                   info.world_size);
    if (nb)  // a rank of the new world takes the row of the old rank it stands in for
      st.buffer_values.copy_from_host(scratch.data() + (rank % info.world_size) * nb);

    if (!optimizer) continue;  // the weights alone (evaluation)
    H5Handle og(H5Gopen2(r.file.get(), (base + "/optimizer").c_str(), H5P_DEFAULT), H5Gclose);
    if (!og.valid()) r.fail(base + "/optimizer", "missing group");
    const std::vector<std::string> names = optimizer->state_names();
    for (const std::string& name : names) {
      const std::string name_key = base + "/optimizer/" + name;
      if (H5Lexists(r.file.get(), name_key.c_str(), H5P_DEFAULT) <= 0)
        r.fail(name_key, "missing dataset: the checkpoint was written with optimizer '" +
                             info.optimizer + "'; the deck's optimizer needs '" + name + "'");
    }
    // The optimizer state of a stage this rank does not hold stays with its owner.
    if (!st.values.defined() && st.param_count() > 0) continue;
    optimizer->prepare(key, st.param_count());
    const int64_t steps = r.int_attr(og.get(), "step_count");
    if (info.header_verified && uint64_t(r.int_attr(og.get(), "step_count_checksum")) !=
                                    checkpoint_format::step_count_checksum(steps))
      r.fail(base + "/optimizer/step_count", "checksum mismatch: changed or damaged");
    optimizer->set_step_count(key, steps);
    for (auto& [name, tensor] : optimizer->state(key)) {
      r.read_floats(base + "/optimizer/" + name, scratch, tensor->numel());
      tensor->copy_from_host(scratch.data());
    }
  }
}

bool has_link(const Reader& r, const std::string& name) {
  return H5Lexists(r.file.get(), name.c_str(), H5P_DEFAULT) > 0;
}

// Kept local gradients: this rank's row, or (another world size) the rows' sum on rank 0.
void load_kept(const Reader& r, const CheckpointInfo& info, const Model& model,
               std::vector<std::vector<Tensor>>& kept, int rank, int world) {
  std::vector<float> rows;
  for (size_t w = 0; w < kept.size(); ++w)
    for (size_t s = 0; s < kept[w].size(); ++s) {
      const std::string group = "/kept/" + std::to_string(w);
      const std::string name = group + "/" + std::to_string(s);
      kept[w][s] = Tensor();
      // Nothing kept yet when the checkpoint was written (H5Lexists needs every parent to exist).
      if (!has_link(r, "/kept") || !has_link(r, group) || !has_link(r, name)) continue;
      const int64_t n = model.stages[s].param_count();
      H5Handle ds = r.open_dataset(name);
      std::vector<hsize_t> d = r.dims(ds.get());
      if (d.size() != 2 || int64_t(d[0]) != info.world_size || int64_t(d[1]) != n)
        r.fail(name, "shape does not match the deck's model (" + std::to_string(n) +
                         " gradient values per rank)");
      rows.resize(d[0] * d[1]);
      r.read_checked(name, H5T_NATIVE_FLOAT, rows.data(), rows.size() * 4, info.world_size);
      std::vector<float> mine(size_t(n), 0.0f);
      if (world == info.world_size) {
        std::copy_n(rows.begin() + int64_t(rank) * n, n, mine.begin());
      } else if (rank == 0) {
        for (int64_t row = 0; row < info.world_size; ++row)
          for (int64_t i = 0; i < n; ++i) mine[size_t(i)] += rows[size_t(row * n + i)];
      }
      Tensor t = Tensor::empty({n}, model.allocator());
      t.set_label("a wave's kept gradient");
      t.copy_from_host(mine.data());
      kept[w][s] = std::move(t);
    }
}

}  // namespace

namespace {

// The checkpoint's stages and model name against `model`'s; `replicas`: what the caller holds.
void check_same_model(const Reader& r, const CheckpointInfo& info, const Model& model,
                      int replicas) {
  if (info.stage_params.size() != model.stages.size())
    r.fail("stages", "the checkpoint has " + std::to_string(info.stage_params.size()) +
                         " stages, the deck's model and schedule.cuts give " +
                         std::to_string(model.stages.size()));
  if (info.model != model.graph.name)
    r.fail("model", "the checkpoint is of model '" + info.model + "', the deck's model is '" +
                        model.graph.name + "'");
  if (replicas > 0 && info.replicas != replicas)
    r.fail("schedule.kind", "the checkpoint holds " + std::to_string(info.replicas) +
                                " model replica(s) per rank (schedule '" + info.schedule +
                                "'), the deck's schedule needs " + std::to_string(replicas));
}

}  // namespace

void load_checkpoint(const std::string& path, Model& model, Optimizer& optimizer, int rank,
                     const ReplicaState& replicas, int world) {
  CheckpointInfo info = read_checkpoint_info(path);
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Reader r = open_reader(path);
  check_same_model(r, info, model, int(replicas.more.size()) + 1);
  load_stages(r, info, "", model, &optimizer, 0, rank);
  const int stage_count = int(model.stages.size());
  for (size_t w = 1; w <= replicas.more.size(); ++w)
    load_stages(r, info, "/replicas/" + std::to_string(w), *replicas.more[w - 1], &optimizer,
                int(w) * stage_count, rank);
  if (replicas.kept) load_kept(r, info, model, *replicas.kept, rank, world);
}

void load_checkpoint_weights(const std::string& path, Model& model) {
  const CheckpointInfo info = read_checkpoint_info(path);
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Reader r = open_reader(path);
  check_same_model(r, info, model, 0);
  load_stages(r, info, "", model, nullptr, 0, 0);
}

}  // namespace wt
