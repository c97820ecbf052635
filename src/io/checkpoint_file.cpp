#include "io/checkpoint_file.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "data/hdf5_util.hpp"
#include "deck/input_error.hpp"

namespace wt {

namespace {

constexpr const char* kFormat = "wavetrain-checkpoint";
constexpr int64_t kVersion = 1;

uint64_t fnv1a(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Fixed-length string attributes: parallel HDF5 writes them collectively without the
// variable-length machinery.
void write_fixed_string_attr(hid_t obj, const char* name, const std::string& value) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<size_t>(value.size(), 1));
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  std::string padded = value.empty() ? std::string(1, '\0') : value;
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), padded.data()) < 0)
    throw std::runtime_error(std::string("cannot write attribute ") + name);
}

void write_int_array_attr(hid_t obj, const char* name, const std::vector<int64_t>& values) {
  hsize_t n = values.size();
  H5Handle space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
  H5Handle attr(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  if (!attr.valid() || (n && H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()) < 0))
    throw std::runtime_error(std::string("cannot write attribute ") + name);
}

H5Handle create_group(hid_t parent, const std::string& name) {
  H5Handle g(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) throw std::runtime_error("cannot create group " + name);
  return g;
}

// Creates a dataset of dims (collective); its checksum attribute is computed from `data` on
// rank `writer` and broadcast, because attribute writes must carry the same value everywhere.
H5Handle create_dataset(hid_t parent, const char* name, hid_t file_type,
                        const std::vector<hsize_t>& dims) {
  H5Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  H5Handle ds(
      H5Dcreate2(parent, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!ds.valid()) throw std::runtime_error(std::string("cannot create dataset ") + name);
  return ds;
}

// Writes a whole 1-D float dataset from `writer` only, with its checksum.
void write_owned(hid_t parent, const char* name, const float* data, int64_t n, int writer, int rank,
                 MPI_Comm comm) {
  H5Handle ds = create_dataset(parent, name, H5T_IEEE_F32LE, {hsize_t(n)});
  uint64_t sum = 0;
  if (rank == writer) {
    if (n > 0 && H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      throw std::runtime_error(std::string("cannot write dataset ") + name);
    sum = fnv1a(data, size_t(n) * sizeof(float));
  }
  MPI_Bcast(&sum, 1, MPI_UINT64_T, writer, comm);
  h5_write_attr_int(ds.get(), "checksum", int64_t(sum));
}

// Writes row `rank` of a [world, n] float dataset from every rank; the checksum covers the rows
// in rank order (each rank's row checksum, combined).
void write_rows(hid_t parent, const char* name, const float* data, int64_t n, int rank, int world,
                MPI_Comm comm) {
  H5Handle ds = create_dataset(parent, name, H5T_IEEE_F32LE, {hsize_t(world), hsize_t(n)});
  if (n > 0) {
    H5Handle file_space(H5Dget_space(ds.get()), H5Sclose);
    hsize_t start[2] = {hsize_t(rank), 0}, count[2] = {1, hsize_t(n)};
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
    H5Handle mem_space(H5Screate_simple(1, &count[1], nullptr), H5Sclose);
    if (H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, mem_space.get(), file_space.get(), H5P_DEFAULT, data) <
        0)
      throw std::runtime_error(std::string("cannot write dataset ") + name);
  }
  std::vector<uint64_t> sums(world);
  uint64_t mine = fnv1a(data, size_t(n) * sizeof(float));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, sums.data(), 1, MPI_UINT64_T, comm);
  h5_write_attr_int(ds.get(), "checksum", int64_t(fnv1a(sums.data(), sums.size() * 8)));
}

// Writes one replica's /stages group under `parent`; its optimizer state is the optimizer's
// stage key key_base + s.
void write_stages(hid_t parent, Model& model, Optimizer& optimizer, int key_base,
                  const std::vector<int>& stage_owner, int rank, int world, MPI_Comm comm) {
  H5Handle stages = create_group(parent, "stages");
  for (size_t s = 0; s < model.stages.size(); ++s) {
    Stage& st = model.stages[s];
    const int owner = stage_owner.at(s);
    const int key = key_base + int(s);
    H5Handle g = create_group(stages.get(), std::to_string(s));
    write_owned(g.get(), "values", st.values.defined() ? st.values.data() : nullptr,
                st.param_count(), owner, rank, comm);
    const int64_t nb = st.buffer_values.defined() ? st.buffer_values.numel() : 0;
    write_rows(g.get(), "buffers", nb ? st.buffer_values.data() : nullptr, nb, rank, world, comm);

    H5Handle og = create_group(g.get(), "optimizer");
    // Only the owner has (or gets) the stage's state: a rank that borrows stages must not
    // allocate theirs just to name the datasets.
    std::vector<std::pair<std::string, Tensor*>> state;
    if (rank == owner) {
      optimizer.prepare(key, st.param_count());
      state = optimizer.state(key);
    }
    int64_t steps = optimizer.step_count(key);
    MPI_Bcast(&steps, 1, MPI_INT64_T, owner, comm);
    h5_write_attr_int(og.get(), "step_count", steps);
    const std::vector<std::string> names = optimizer.state_names();
    for (size_t i = 0; i < names.size(); ++i)
      write_owned(og.get(), names[i].c_str(), rank == owner ? state.at(i).second->data() : nullptr,
                  st.param_count(), owner, rank, comm);
  }
}

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
  if (!r.file.valid())
    throw InputError(path, 0, "", "cannot open the checkpoint (truncated or corrupted file)");
  return r;
}

}  // namespace

void write_checkpoint(const std::string& path, const CheckpointInfo& info, Model& model,
                      Optimizer& optimizer, const std::vector<int>& stage_owner, MPI_Comm comm,
                      const ReplicaState& replicas) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  hdf5_silence_errors();
  int rank = 0, world = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &world);

  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
  H5Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!file.valid()) throw std::runtime_error("cannot create checkpoint file " + path);
  hid_t f = file.get();

  write_fixed_string_attr(f, "format", kFormat);
  h5_write_attr_int(f, "version", kVersion);
  h5_write_attr_int(f, "step", info.step);
  h5_write_attr_int(f, "global_batch", info.global_batch);
  h5_write_attr_int(f, "batches_per_epoch", info.batches_per_epoch);
  h5_write_attr_int(f, "world_size", world);
  h5_write_attr_int(f, "seed", int64_t(info.seed));
  write_fixed_string_attr(f, "schedule", info.schedule);
  write_fixed_string_attr(f, "model", info.model);
  write_fixed_string_attr(f, "optimizer", info.optimizer);
  h5_write_attr_int(f, "stages", int64_t(model.stages.size()));
  write_int_array_attr(f, "cuts", info.cuts);

  {
    H5Handle ds = create_dataset(f, "deck", H5T_STD_U8LE, {hsize_t(info.deck_toml.size())});
    if (rank == 0 && !info.deck_toml.empty() &&
        H5Dwrite(ds.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, info.deck_toml.data()) <
            0)
      throw std::runtime_error("cannot write the deck into " + path);
    h5_write_attr_int(ds.get(), "checksum",
                      int64_t(fnv1a(info.deck_toml.data(), info.deck_toml.size())));
  }

  const int stage_count = int(model.stages.size());
  write_stages(f, model, optimizer, 0, stage_owner, rank, world, comm);
  if (!replicas.more.empty()) {
    h5_write_attr_int(f, "replicas", int64_t(replicas.more.size() + 1));
    H5Handle rg = create_group(f, "replicas");
    for (size_t w = 1; w <= replicas.more.size(); ++w) {
      H5Handle g = create_group(rg.get(), std::to_string(w));
      write_stages(g.get(), *replicas.more[w - 1], optimizer, int(w) * stage_count, stage_owner,
                   rank, world, comm);
    }
  }
  if (replicas.kept) {
    // Every rank keeps gradients at the same instructions, so definedness agrees across ranks.
    H5Handle kg = create_group(f, "kept");
    for (size_t w = 0; w < replicas.kept->size(); ++w) {
      H5Handle g = create_group(kg.get(), std::to_string(w));
      for (size_t s = 0; s < (*replicas.kept)[w].size(); ++s) {
        const Tensor& t = (*replicas.kept)[w][s];
        if (t.defined())
          write_rows(g.get(), std::to_string(s).c_str(), t.data(), t.numel(), rank, world, comm);
      }
    }
  }
  if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) throw std::runtime_error("cannot flush " + path);
}

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
  if (r.int_attr(f, "version") != kVersion)
    r.fail("version", "checkpoint format version " + std::to_string(r.int_attr(f, "version")) +
                          " is not supported (this build reads version " +
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
  if (replicas < 1) r.fail("replicas", "header values out of range (corrupted file)");
  info.replicas = int(replicas);
  if (info.step < 0 || info.world_size < 1 || stages < 1)
    r.fail("step", "header values out of range (corrupted file)");
  info.cuts = r.int_array_attr(f, "cuts");
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
                 Model& model, Optimizer& optimizer, int key_base, int rank) {
  std::vector<float> scratch;
  for (size_t s = 0; s < model.stages.size(); ++s) {
    Stage& st = model.stages[s];
    const int key = key_base + int(s);
    const std::string base = prefix + "/stages/" + std::to_string(s);
    r.read_floats(base + "/values", scratch, st.param_count());  // checked even when not kept
    // A stage this rank does not hold (borrowed from its owner) gets the owner's values by
    // Broadcast when it is next needed.
    if (st.values.defined()) std::memcpy(st.values.data(), scratch.data(), scratch.size() * 4);

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
      std::memcpy(st.buffer_values.data(), scratch.data() + (rank % info.world_size) * nb, nb * 4);

    H5Handle og(H5Gopen2(r.file.get(), (base + "/optimizer").c_str(), H5P_DEFAULT), H5Gclose);
    if (!og.valid()) r.fail(base + "/optimizer", "missing group");
    const std::vector<std::string> names = optimizer.state_names();
    for (const std::string& name : names) {
      const std::string name_key = base + "/optimizer/" + name;
      if (H5Lexists(r.file.get(), name_key.c_str(), H5P_DEFAULT) <= 0)
        r.fail(name_key, "missing dataset: the checkpoint was written with optimizer '" +
                             info.optimizer + "'; the deck's optimizer needs '" + name + "'");
    }
    // The optimizer state of a stage this rank does not hold stays with its owner.
    if (!st.values.defined() && st.param_count() > 0) continue;
    optimizer.prepare(key, st.param_count());
    optimizer.set_step_count(key, r.int_attr(og.get(), "step_count"));
    for (auto& [name, tensor] : optimizer.state(key)) {
      r.read_floats(base + "/optimizer/" + name, scratch, tensor->numel());
      std::memcpy(tensor->data(), scratch.data(), scratch.size() * 4);
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
      Tensor t = Tensor::empty({n});
      t.fill(0.0f);
      float* out = t.data();
      if (world == info.world_size) {
        std::memcpy(out, rows.data() + int64_t(rank) * n, size_t(n) * 4);
      } else if (rank == 0) {
        for (int64_t row = 0; row < info.world_size; ++row)
          for (int64_t i = 0; i < n; ++i) out[i] += rows[row * n + i];
      }
      kept[w][s] = std::move(t);
    }
}

}  // namespace

void load_checkpoint(const std::string& path, Model& model, Optimizer& optimizer, int rank,
                     const ReplicaState& replicas, int world) {
  CheckpointInfo info = read_checkpoint_info(path);
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  Reader r = open_reader(path);
  if (info.stage_params.size() != model.stages.size())
    r.fail("stages", "the checkpoint has " + std::to_string(info.stage_params.size()) +
                         " stages, the deck's model and schedule.cuts give " +
                         std::to_string(model.stages.size()));
  if (info.model != model.graph.name)
    r.fail("model", "the checkpoint is of model '" + info.model + "', the deck's model is '" +
                        model.graph.name + "'");
  const int want = int(replicas.more.size()) + 1;
  if (info.replicas != want)
    r.fail("schedule.kind", "the checkpoint holds " + std::to_string(info.replicas) +
                                " model replica(s) per rank (schedule '" + info.schedule +
                                "'), the deck's schedule needs " + std::to_string(want));
  load_stages(r, info, "", model, optimizer, 0, rank);
  const int stage_count = int(model.stages.size());
  for (size_t w = 1; w <= replicas.more.size(); ++w)
    load_stages(r, info, "/replicas/" + std::to_string(w), *replicas.more[w - 1], optimizer,
                int(w) * stage_count, rank);
  if (replicas.kept) load_kept(r, info, model, *replicas.kept, rank, world);
}

}  // namespace wt
