// trace.h5 written by write_trace_file and read back with the HDF5 C API, column by column, as the
// analysis scripts read it.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "dataset_test_util.hpp"
#include "io/trace_writer.hpp"
#include "util/hdf5_util.hpp"

namespace wt {
namespace {

TraceEvent make_event(const char* name, int32_t stage, int32_t batch, int32_t stream, int64_t step,
                      double begin, double end, int64_t bytes) {
  TraceEvent e;
  std::memset(e.name, 0, sizeof e.name);
  std::memcpy(e.name, name, strnlen(name, kTraceNameBytes));
  e.stage = stage;
  e.batch = batch;
  e.wave = stage + 7;  // any value distinct from stage, to catch swapped columns
  e.stream = stream;
  e.step = step;
  e.begin = begin;
  e.end = end;
  e.bytes = bytes;
  return e;
}

// Two ranks with different record counts; rank 1 has no memory samples.
std::vector<RankTrace> sample_ranks() {
  RankTrace r0;
  r0.rank = 0;
  r0.events = {make_event("LoadBatch", -1, 3, 0, 10, 0.5, 0.75, 100352),
               make_event("AllReduce", 0, -1, 1, 10, 1.25, 2.5, 1067560),
               make_event("Step", 0, -1, 0, 11, 3.0, 3.125, 0)};
  r0.steps = {{10, 0.25, 2.75}, {11, 2.875, 3.5}};
  r0.memory = {{0.25, 4096, 8192}, {0.5, 6144, 8192}};
  RankTrace r1;
  r1.rank = 1;
  r1.events = {make_event("Forward", 2, 4, 0, 10, 0.625, 1.0, 0)};
  r1.steps = {{10, 0.3, 2.7}};
  return {r0, r1};
}

template <typename T>
std::vector<T> read_column(hid_t file, const std::string& path, hid_t mem_type) {
  H5Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  EXPECT_TRUE(dset.valid()) << path;
  if (!dset.valid()) return {};
  H5Handle space(H5Dget_space(dset.get()), H5Sclose);
  EXPECT_EQ(H5Sget_simple_extent_ndims(space.get()), 1) << path;
  std::vector<T> out(H5Sget_simple_extent_npoints(space.get()));
  if (!out.empty()) {
    EXPECT_GE(H5Dread(dset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0);
  }
  return out;
}

std::vector<std::string> read_names(hid_t file, const std::string& path) {
  H5Handle dset(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose);
  H5Handle type(H5Dget_type(dset.get()), H5Tclose);
  EXPECT_EQ(H5Tget_class(type.get()), H5T_STRING);
  EXPECT_EQ(H5Tis_variable_str(type.get()), 0) << "names must be fixed-length";
  EXPECT_EQ(H5Tget_size(type.get()), size_t(kTraceNameBytes));
  EXPECT_EQ(H5Tget_strpad(type.get()), H5T_STR_NULLPAD);
  H5Handle space(H5Dget_space(dset.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  std::vector<char> raw(n * kTraceNameBytes);
  EXPECT_GE(H5Dread(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  std::vector<std::string> names;
  for (hssize_t i = 0; i < n; ++i)
    names.emplace_back(&raw[i * kTraceNameBytes],
                       strnlen(&raw[i * kTraceNameBytes], kTraceNameBytes));
  return names;
}

TEST(TraceWriter, RoundTripThroughTheHdf5CApi) {
  testutil::TempDir tmp("trace");
  const std::string path = tmp.file("trace.h5");
  const TraceInfo info{2, "gang", "mlp", 10, 12};
  const std::vector<RankTrace> ranks = sample_ranks();
  write_trace_file(path, info, ranks);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));

  std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  ASSERT_TRUE(file.valid());
  std::string s;
  int64_t v = 0;
  ASSERT_TRUE(h5_read_attr_string(file.get(), "format", &s));
  EXPECT_EQ(s, "wavetrain-trace");
  ASSERT_TRUE(h5_read_attr_int(file.get(), "version", &v));
  EXPECT_EQ(v, 1);
  ASSERT_TRUE(h5_read_attr_int(file.get(), "world_size", &v));
  EXPECT_EQ(v, 2);
  ASSERT_TRUE(h5_read_attr_string(file.get(), "schedule", &s));
  EXPECT_EQ(s, "gang");
  ASSERT_TRUE(h5_read_attr_string(file.get(), "model", &s));
  EXPECT_EQ(s, "mlp");
  ASSERT_TRUE(h5_read_attr_int(file.get(), "start_step", &v));
  EXPECT_EQ(v, 10);
  ASSERT_TRUE(h5_read_attr_int(file.get(), "end_step", &v));
  EXPECT_EQ(v, 12);

  for (const RankTrace& r : ranks) {
    const std::string g = "/rank_" + std::to_string(r.rank);
    H5Handle group(H5Gopen2(file.get(), g.c_str(), H5P_DEFAULT), H5Gclose);
    ASSERT_TRUE(group.valid()) << g;
    ASSERT_TRUE(h5_read_attr_int(group.get(), "rank", &v));
    EXPECT_EQ(v, r.rank);

    const auto names = read_names(file.get(), g + "/events/name");
    const auto stage = read_column<int32_t>(file.get(), g + "/events/stage", H5T_NATIVE_INT32);
    const auto batch = read_column<int32_t>(file.get(), g + "/events/batch", H5T_NATIVE_INT32);
    const auto wave = read_column<int32_t>(file.get(), g + "/events/wave", H5T_NATIVE_INT32);
    const auto stream = read_column<int32_t>(file.get(), g + "/events/stream", H5T_NATIVE_INT32);
    const auto step = read_column<int64_t>(file.get(), g + "/events/step", H5T_NATIVE_INT64);
    const auto begin = read_column<double>(file.get(), g + "/events/begin", H5T_NATIVE_DOUBLE);
    const auto end = read_column<double>(file.get(), g + "/events/end", H5T_NATIVE_DOUBLE);
    const auto bytes = read_column<int64_t>(file.get(), g + "/events/bytes", H5T_NATIVE_INT64);
    ASSERT_EQ(names.size(), r.events.size());
    for (const auto* col : {&stage, &batch, &wave, &stream})
      ASSERT_EQ(col->size(), r.events.size());
    for (size_t i = 0; i < r.events.size(); ++i) {
      const TraceEvent& e = r.events[i];
      EXPECT_EQ(names[i], std::string(e.name));
      EXPECT_EQ(stage[i], e.stage);
      EXPECT_EQ(batch[i], e.batch);
      EXPECT_EQ(wave[i], e.wave);
      EXPECT_EQ(stream[i], e.stream);
      EXPECT_EQ(step[i], e.step);
      EXPECT_EQ(begin[i], e.begin);
      EXPECT_EQ(end[i], e.end);
      EXPECT_EQ(bytes[i], e.bytes);
    }

    const auto sstep = read_column<int64_t>(file.get(), g + "/steps/step", H5T_NATIVE_INT64);
    const auto sbegin = read_column<double>(file.get(), g + "/steps/begin", H5T_NATIVE_DOUBLE);
    const auto send = read_column<double>(file.get(), g + "/steps/end", H5T_NATIVE_DOUBLE);
    ASSERT_EQ(sstep.size(), r.steps.size());
    for (size_t i = 0; i < r.steps.size(); ++i) {
      EXPECT_EQ(sstep[i], r.steps[i].step);
      EXPECT_EQ(sbegin[i], r.steps[i].begin);
      EXPECT_EQ(send[i], r.steps[i].end);
    }

    const auto t = read_column<double>(file.get(), g + "/memory/time", H5T_NATIVE_DOUBLE);
    const auto in_use = read_column<int64_t>(file.get(), g + "/memory/in_use", H5T_NATIVE_INT64);
    const auto reserved =
        read_column<int64_t>(file.get(), g + "/memory/reserved", H5T_NATIVE_INT64);
    ASSERT_EQ(t.size(), r.memory.size());  // rank 1: present and empty
    for (size_t i = 0; i < r.memory.size(); ++i) {
      EXPECT_EQ(t[i], r.memory[i].time);
      EXPECT_EQ(in_use[i], r.memory[i].in_use);
      EXPECT_EQ(reserved[i], r.memory[i].reserved);
    }
  }
  EXPECT_LT(H5Gopen2(file.get(), "/rank_2", H5P_DEFAULT), 0) << "only the ranks given";
}

TEST(TraceWriter, UnwritableDirectoryThrowsAndLeavesNothing) {
  testutil::TempDir tmp("trace");
  const std::string path = tmp.file("missing_dir/trace.h5");
  EXPECT_THROW(write_trace_file(path, TraceInfo{1, "gang", "mlp", 0, 1}, sample_ranks()),
               std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

}  // namespace
}  // namespace wt
