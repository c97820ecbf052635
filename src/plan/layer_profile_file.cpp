#include "plan/layer_profile_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "io/checked_file.hpp"
#include "util/hdf5_util.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

constexpr const char* kFormat = "wavetrain-layer-profile";
constexpr int64_t kVersion = 1;
constexpr const char* kTimingNames[4] = {"forward_fixed_s", "forward_per_sample_s",
                                         "backward_fixed_s", "backward_per_sample_s"};

double* timing_field(LayerTiming& t, int which) {
  double* fields[4] = {&t.forward_fixed_s, &t.forward_per_sample_s, &t.backward_fixed_s,
                       &t.backward_per_sample_s};
  return fields[which];
}

H5Handle string_type() {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

void write_dataset(hid_t file, const char* name, hid_t file_type, hid_t mem_type, hsize_t n,
                   const void* data) {
  H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Handle ds(H5Dcreate2(file, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
  if (!ds.valid() ||
      (n > 0 && H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
    throw std::runtime_error(std::string("cannot write dataset ") + name);
}

// Opens a 1-d dataset of `n` elements (n < 0: any length, returned in *n).
H5Handle open_vector(hid_t file, const std::string& path, const char* name, int64_t* n) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
    throw InputError(path, 0, name, "missing dataset (not a complete layer profile)");
  H5Handle ds(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  H5Handle space(H5Dget_space(ds.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  if (!ds.valid() || H5Sget_simple_extent_ndims(space.get()) != 1 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1)
    throw InputError(path, 0, name, "unreadable or not one-dimensional (damaged file?)");
  if (*n >= 0 && int64_t(dims[0]) != *n)
    throw InputError(path, 0, name,
                     "has " + std::to_string(dims[0]) + " entries, /nodes has " +
                         std::to_string(*n) + " (damaged file?)");
  *n = int64_t(dims[0]);
  return ds;
}

// The times at more batch sizes (LayerProfile::batches): /batches int64[m], /forward_at and
// /backward_at float64[nodes * m], node-major.
void write_measured_points(hid_t f, const LayerProfile& profile) {
  const hsize_t m = profile.batches.size();
  write_dataset(f, "batches", H5T_STD_I64LE, H5T_NATIVE_INT64, m, profile.batches.data());
  for (const bool forward : {true, false}) {
    std::vector<double> all;
    for (const LayerTiming& t : profile.timing) {
      const std::vector<double>& v = forward ? t.forward_at : t.backward_at;
      if (v.size() != m) throw std::runtime_error("layer profile: one time per batch size");
      all.insert(all.end(), v.begin(), v.end());
    }
    write_dataset(f, forward ? "forward_at" : "backward_at", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                  all.size(), all.data());
  }
}

void read_measured_points(hid_t f, const std::string& path, LayerProfile& p) {
  if (H5Lexists(f, "batches", H5P_DEFAULT) <= 0) return;  // fitted lines only
  int64_t m = -1;
  H5Handle ds = open_vector(f, path, "batches", &m);
  p.batches.resize(size_t(m));
  if (m > 0 &&
      H5Dread(ds.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.batches.data()) < 0)
    throw InputError(path, 0, "batches", "cannot read (damaged file?)");
  for (int64_t k = 0; k < m; ++k)
    if (p.batches[size_t(k)] < 1 || (k > 0 && p.batches[size_t(k)] <= p.batches[size_t(k) - 1]))
      throw InputError(path, 0, "batches", "not ascending batch sizes (damaged file?)");
  for (const bool forward : {true, false}) {
    const char* name = forward ? "forward_at" : "backward_at";
    int64_t n = int64_t(p.timing.size()) * m;
    H5Handle values = open_vector(f, path, name, &n);
    std::vector<double> all(static_cast<size_t>(n));
    if (n > 0 &&
        H5Dread(values.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()) < 0)
      throw InputError(path, 0, name, "cannot read (damaged file?)");
    for (size_t i = 0; i < p.timing.size(); ++i) {
      std::vector<double>& v = forward ? p.timing[i].forward_at : p.timing[i].backward_at;
      v.assign(all.begin() + int64_t(i) * m, all.begin() + int64_t(i + 1) * m);
      for (double x : v)
        if (!std::isfinite(x) || x < 0)
          throw InputError(
              path, 0, name,
              "entry of node " + std::to_string(i) + " is not a time in seconds (damaged file?)");
    }
  }
}

// The whole file, built in memory (HDF5's core driver, no backing store): HDF5 never writes to
// disk here, so a full disk or a file size limit cannot leave it with a file it failed to close
// (which crashes the library's shutdown at exit); the bytes are written by a checked write.
std::string profile_image(const std::string& path, const LayerProfile& profile) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  hdf5_silence_errors();
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 64 * 1024, 0) < 0)
    throw std::runtime_error("cannot set up HDF5's in-memory file driver");
  H5Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!file.valid()) throw std::runtime_error("cannot create the file in memory");
  const hid_t f = file.get();
  h5_write_attr_string(f, "format", kFormat);
  h5_write_attr_int(f, "version", kVersion);
  h5_write_attr_string(f, "model", profile.model);
  h5_write_attr_string(f, "device", profile.device);
  const hsize_t n = profile.nodes.size();
  std::vector<const char*> names;
  for (const std::string& s : profile.nodes) names.push_back(s.c_str());
  H5Handle type = string_type();
  write_dataset(f, "nodes", type.get(), type.get(), n, names.data());
  for (int k = 0; k < 4; ++k) {
    std::vector<double> column;
    for (LayerTiming t : profile.timing) column.push_back(*timing_field(t, k));
    if (column.size() != n) throw std::runtime_error("layer profile: one timing per node");
    write_dataset(f, kTimingNames[k], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, column.data());
  }
  if (!profile.batches.empty()) write_measured_points(f, profile);
  const ssize_t size = H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 ? -1 : H5Fget_file_image(f, nullptr, 0);
  std::string image(size_t(std::max<ssize_t>(size, 0)), '\0');
  if (size <= 0 || H5Fget_file_image(f, image.data(), image.size()) != size)
    throw std::runtime_error("cannot take the file's image from memory");
  return image;
}

}  // namespace

void save_layer_profile(const std::string& path, const LayerProfile& profile) {
  // Through path.tmp and a rename; a failed write names the file and the system's reason and
  // removes the temporary.
  write_file_atomically(path, profile_image(path, profile));
}

LayerProfile load_layer_profile(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  hdf5_silence_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw InputError(path, 0, "", "not an HDF5 file (damaged layer profile?)");
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw InputError(path, 0, "", "cannot open the layer profile");
  const hid_t f = file.get();
  LayerProfile p;
  std::string format;
  int64_t version = 0;
  try {
    h5_read_attr_string(f, "format", &format);
    h5_read_attr_int(f, "version", &version);
    if (format == kFormat && !h5_read_attr_string(f, "model", &p.model))
      throw InputError(path, 0, "model", "missing attribute");
    if (format == kFormat) h5_read_attr_string(f, "device", &p.device);
  } catch (const std::runtime_error& e) {
    throw InputError(path, 0, "", std::string("unreadable header: ") + e.what());
  }
  if (format != kFormat) throw InputError(path, 0, "format", "not a wavetrain layer profile");
  if (version != kVersion)
    throw InputError(path, 0, "version",
                     "layer profile version " + std::to_string(version) +
                         " is not supported (this build reads version " + std::to_string(kVersion) +
                         ")");

  int64_t n = -1;
  {
    H5Handle ds = open_vector(f, path, "nodes", &n);
    H5Handle type = string_type();
    std::vector<char*> names(static_cast<size_t>(n), nullptr);
    if (n > 0 && H5Dread(ds.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, names.data()) < 0)
      throw InputError(path, 0, "nodes", "cannot read the node names (damaged file?)");
    for (char* s : names) p.nodes.emplace_back(s ? s : "");
    H5Handle space(H5Dget_space(ds.get()), H5Sclose);
    if (n > 0) H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, names.data());
  }
  p.timing.resize(size_t(n));
  for (int k = 0; k < 4; ++k) {
    H5Handle ds = open_vector(f, path, kTimingNames[k], &n);
    std::vector<double> column(static_cast<size_t>(n));
    if (n > 0 &&
        H5Dread(ds.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, column.data()) < 0)
      throw InputError(path, 0, kTimingNames[k], "cannot read (damaged file?)");
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(column[size_t(i)]) || column[size_t(i)] < 0)
        throw InputError(path, 0, kTimingNames[k],
                         "entry " + std::to_string(i) + " is not a time in seconds (" +
                             std::to_string(column[size_t(i)]) + ")");
      *timing_field(p.timing[size_t(i)], k) = column[size_t(i)];
    }
  }
  read_measured_points(f, path, p);
  return p;
}

std::string profile_mismatch(const LayerProfile& profile, const Graph& graph) {
  if (profile.model != graph.name)
    return "it was measured on model '" + profile.model + "', not '" + graph.name + "'";
  if (profile.nodes.size() != graph.nodes.size() || profile.timing.size() != graph.nodes.size())
    return "it has " + std::to_string(profile.nodes.size()) + " layers, the model " +
           std::to_string(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (profile.nodes[i] != graph.nodes[i].name)
      return "layer " + std::to_string(i) + " is '" + profile.nodes[i] + "' there, '" +
             graph.nodes[i].name + "' in the model";
  return "";
}

LayerProfile load_checked_profile(const std::string& path, const Graph& graph) {
  LayerProfile profile = load_layer_profile(path);
  const std::string mismatch = profile_mismatch(profile, graph);
  if (!mismatch.empty()) throw InputError(path, 0, "--profile", mismatch);
  return profile;
}

}  // namespace wt
