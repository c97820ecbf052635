// Batches on a device that host code cannot write (issue 31's input path): uint8 rows travel as
// their raw bytes through pinned buffers and are normalised on the device through the reader's
// table, bit for bit the host's floats under global, per-channel and per-element scaling, read
// ahead or not; the pinned pool stays a few buffers; and a buffer reused before its copy ran (the
// bug a GPU would hide until the DMA lost the race) is refused by the strict device, named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/dataset_batch_source.hpp"
#include "dataset_test_util.hpp"
#include "device/device_context.hpp"
#include "device/race_detector.hpp"
#include "test_memory.hpp"

namespace wt {
namespace {

using testutil::TempDir;

const Shape kSample{2, 2, 3};

// The batches of `sequences`, each planned one ahead as the executor plans, as host floats.
std::vector<float> fetch_floats(DatasetBatchSource& source, const std::vector<int64_t>& sequences) {
  std::vector<float> out;
  Tensor x;
  std::vector<int32_t> y;
  for (size_t i = 0; i < sequences.size(); ++i) {
    source.fetch({sequences[i], 0, 1}, x, y, 1);
    if (i + 1 < sequences.size()) source.plan({{sequences[i + 1], 0, 1}});
    const std::vector<float> v = x.to_host();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

std::vector<float> host_batches(const std::string& path, const std::vector<int64_t>& sequences) {
  DatasetReader reader(path, "train", kSample, 10);
  BatchSampler sampler(reader.size(), 6, 7, true);
  DatasetBatchSource source(reader, wt::testing::memory(), sampler, 6, true);
  return fetch_floats(source, sequences);
}

class PinnedBatches : public ::testing::Test {
 protected:
  void SetUp() override { testutil::write_synthetic_dataset(path_, 30, 4, kSample, 4); }
  TempDir dir_{"pinned"};
  std::string path_ = dir_.file("d.h5");
  const std::vector<int64_t> sequences_{0, 1, 2, 3, 4, 5, 6};  // more than an epoch of 5
};

TEST_F(PinnedBatches, DequantisedOnTheStrictDeviceTheyAreTheHostsFloatsBitForBit) {
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> scalings{
      {{0.25}, {0.5}},                                                // global
      {{0.5, 0.3}, {0.5, 0.1}},                                       // per channel
      {{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.0, 0.5},  // per element
       {1, 2, 3, 4, 5, 6, 0.5, 0.25, 0.125, 2, 3, 4}}};
  for (const auto& [mean, std_dev] : scalings) {
    testutil::set_array_attr(path_, "mean", mean);
    testutil::set_array_attr(path_, "std", std_dev);
    const std::vector<float> expected = host_batches(path_, sequences_);
    for (bool preload : {true, false}) {
      DeviceContext strict(0, DeviceKind::Strict, 3);
      DatasetReader reader(path_, "train", kSample, 10);
      ASSERT_TRUE(reader.has_u8_table());
      BatchSampler sampler(reader.size(), 6, 7, true);
      DatasetBatchSource source(reader, strict.allocator(), sampler, 6, preload);
      source.dequantize_on(strict);
      const std::vector<float> got = fetch_floats(source, sequences_);
      strict.backend().raise_deferred();
      ASSERT_EQ(got, expected) << mean.size() << " means, preload " << preload;
      // Two steps' loads at most are in flight: the pool never grows with the run.
      EXPECT_LE(source.staging()->buffers(), 3u);
    }
  }
}

TEST_F(PinnedBatches, WithoutDeviceKernelsTheHostsFloatsTravelPinned) {
  const std::vector<float> expected = host_batches(path_, sequences_);
  DeviceContext strict(0, DeviceKind::Strict, 5);
  DatasetReader reader(path_, "train", kSample, 10);
  BatchSampler sampler(reader.size(), 6, 7, true);
  DatasetBatchSource source(reader, strict.allocator(), sampler, 6, true);
  EXPECT_EQ(fetch_floats(source, sequences_), expected);
  ASSERT_NE(source.staging(), nullptr);
  EXPECT_GE(source.staging()->buffers(), 1u);
}

TEST_F(PinnedBatches, ABufferReusedBeforeItsCopyRanIsRefusedNamingTheCopy) {
  DeviceContext strict(0, DeviceKind::Strict, 1);
  DatasetReader reader(path_, "train", kSample, 10);
  BatchSampler sampler(reader.size(), 6, 7, true);
  DatasetBatchSource source(reader, strict.allocator(), sampler, 6, true);
  source.dequantize_on(strict);
  source.staging()->plant_early_release(true);  // the bug: back to the pool when issued
  Tensor x;
  std::vector<int32_t> y;
  source.fetch({0, 0, 1}, x, y, 1);  // its copy is queued, not run (the strict device is lazy)
  source.plan({{1, 0, 1}});          // the reading thread fills the same buffer with batch 1
  source.fetch({1, 0, 1}, x, y, 1);
  strict.synchronize();  // batch 0's copy runs now and finds batch 1 in its source
  try {
    strict.backend().raise_deferred();
    FAIL() << "a pinned buffer rewritten under its queued copy passed";
  } catch (const OrderingError& e) {
    EXPECT_NE(std::string(e.what()).find("the host rewrote the pinned source of a batch of raw "
                                         "uint8 inputs after issuing the copy"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace wt
