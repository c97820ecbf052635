#include "io/trace_writer.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "util/hdf5_util.hpp"

namespace wt {

namespace {

H5Handle create_group(hid_t parent, const std::string& name) {
  H5Handle group(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group.valid()) throw std::runtime_error("cannot create group " + name);
  return group;
}

// A 1-D dataset of `count` elements of `type`, filled from `data` (nothing to write if empty).
void write_column(hid_t group, const char* name, hid_t type, const void* data, size_t count) {
  const hsize_t dims[1] = {static_cast<hsize_t>(count)};
  H5Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose);
  H5Handle dset(H5Dcreate2(group, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Dclose);
  if (!dset.valid()) throw std::runtime_error(std::string("cannot create dataset ") + name);
  if (count > 0 && H5Dwrite(dset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw std::runtime_error(std::string("cannot write dataset ") + name);
}

// One field of an array of records, as a contiguous column.
template <typename Record, typename Field>
std::vector<Field> column(const std::vector<Record>& rows, Field Record::*field) {
  std::vector<Field> out;
  out.reserve(rows.size());
  for (const Record& r : rows) out.push_back(r.*field);
  return out;
}

template <typename Record, typename Field>
void write_field(hid_t group, const char* name, hid_t type, const std::vector<Record>& rows,
                 Field Record::*field) {
  const std::vector<Field> values = column(rows, field);
  write_column(group, name, type, values.data(), values.size());
}

void write_events(hid_t rank_group, const std::vector<TraceEvent>& events) {
  H5Handle group = create_group(rank_group, "events");
  H5Handle name_type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(name_type.get(), kTraceNameBytes);
  H5Tset_strpad(name_type.get(), H5T_STR_NULLPAD);
  std::vector<char> names(events.size() * kTraceNameBytes);
  for (size_t i = 0; i < events.size(); ++i)
    std::copy(events[i].name, events[i].name + kTraceNameBytes, &names[i * kTraceNameBytes]);
  const hid_t g = group.get();
  write_column(g, "name", name_type.get(), names.data(), events.size());
  write_field(g, "stage", H5T_NATIVE_INT32, events, &TraceEvent::stage);
  write_field(g, "batch", H5T_NATIVE_INT32, events, &TraceEvent::batch);
  write_field(g, "wave", H5T_NATIVE_INT32, events, &TraceEvent::wave);
  write_field(g, "stream", H5T_NATIVE_INT32, events, &TraceEvent::stream);
  write_field(g, "step", H5T_NATIVE_INT64, events, &TraceEvent::step);
  write_field(g, "begin", H5T_NATIVE_DOUBLE, events, &TraceEvent::begin);
  write_field(g, "end", H5T_NATIVE_DOUBLE, events, &TraceEvent::end);
  write_field(g, "bytes", H5T_NATIVE_INT64, events, &TraceEvent::bytes);
  write_field(g, "device_begin", H5T_NATIVE_DOUBLE, events, &TraceEvent::device_begin);
  write_field(g, "device_end", H5T_NATIVE_DOUBLE, events, &TraceEvent::device_end);
}

void write_steps(hid_t rank_group, const std::vector<TraceStep>& steps) {
  H5Handle group = create_group(rank_group, "steps");
  write_field(group.get(), "step", H5T_NATIVE_INT64, steps, &TraceStep::step);
  write_field(group.get(), "begin", H5T_NATIVE_DOUBLE, steps, &TraceStep::begin);
  write_field(group.get(), "end", H5T_NATIVE_DOUBLE, steps, &TraceStep::end);
}

void write_memory(hid_t rank_group, const std::vector<TraceMemorySample>& memory) {
  H5Handle group = create_group(rank_group, "memory");
  write_field(group.get(), "time", H5T_NATIVE_DOUBLE, memory, &TraceMemorySample::time);
  write_field(group.get(), "in_use", H5T_NATIVE_INT64, memory, &TraceMemorySample::in_use);
  write_field(group.get(), "reserved", H5T_NATIVE_INT64, memory, &TraceMemorySample::reserved);
  write_field(group.get(), "forced_syncs", H5T_NATIVE_INT64, memory,
              &TraceMemorySample::forced_syncs);
  write_field(group.get(), "largest_free", H5T_NATIVE_INT64, memory,
              &TraceMemorySample::largest_free);
  write_field(group.get(), "job_in_use", H5T_NATIVE_INT64, memory, &TraceMemorySample::job_in_use);
}

void write_contents(const std::string& path, const TraceInfo& info,
                    const std::vector<RankTrace>& ranks) {
  H5Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw std::runtime_error("cannot create trace file " + path);
  const hid_t root = file.get();
  h5_write_attr_string(root, "format", kTraceFormat);
  h5_write_attr_int(root, "version", kTraceVersion);
  h5_write_attr_int(root, "world_size", info.world_size);
  h5_write_attr_string(root, "schedule", info.schedule);
  h5_write_attr_string(root, "model", info.model);
  h5_write_attr_int(root, "start_step", info.start_step);
  h5_write_attr_int(root, "end_step", info.end_step);
  h5_write_attr_string(root, "device_clock", info.device_clock);
  for (const RankTrace& r : ranks) {
    H5Handle group = create_group(root, "rank_" + std::to_string(r.rank));
    h5_write_attr_int(group.get(), "rank", r.rank);
    h5_write_attr_int(group.get(), "clock_origin_ns", r.clock_origin_ns);
    write_events(group.get(), r.events);
    write_steps(group.get(), r.steps);
    write_memory(group.get(), r.memory);
  }
  if (H5Fflush(root, H5F_SCOPE_GLOBAL) < 0) throw std::runtime_error("cannot flush " + path);
}

}  // namespace

void write_trace_file(const std::string& path, const TraceInfo& info,
                      const std::vector<RankTrace>& ranks) {
  const std::string temporary = path + ".partial";
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
    hdf5_silence_errors();
    try {
      write_contents(temporary, info, ranks);  // the file is closed when this returns
    } catch (...) {
      std::remove(temporary.c_str());
      throw;
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec)
    throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + ec.message());
}

}  // namespace wt
