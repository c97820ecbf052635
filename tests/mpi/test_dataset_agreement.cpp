// agree_on_dataset on 2 real ranks (issue 17 §4): equal digests pass at no more cost than one
// broadcast and one allreduce; a rank whose digest differs makes every rank throw the same
// AgreedError, status 2, naming both ranks, their files and what differs.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "comm/mpi_communicator.hpp"
#include "job/dataset_agreement.hpp"
#include "util/agreed_error.hpp"

namespace {

wt::DatasetDigest digest(int64_t train_samples, uint64_t rows) {
  wt::DatasetDigest d;
  d.train.samples = train_samples;
  d.train.dims = 1;
  d.train.shape[0] = 784;
  d.train.labels_per_sample = 1;
  d.test = d.train;
  d.test.samples = 100;
  d.attributes = 7;
  d.rows = rows;
  return d;
}

std::pair<int, std::string> agree(wt::Communicator& comm, const wt::DatasetDigest& d,
                                  const std::string& path) {
  try {
    wt::agree_on_dataset(comm, d, path);
  } catch (const wt::AgreedError& e) {
    return {e.status(), e.what()};
  }
  return {0, ""};
}

TEST(DatasetAgreement, SameDataUnderDifferentNamesAgrees) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  const auto [status, message] =
      agree(comm, digest(1000, 42), "/node" + std::to_string(comm.rank()) + "/d.h5");
  EXPECT_EQ(status, 0) << message;
}

TEST(DatasetAgreement, DifferentCopyEndsEveryRankNamingRanksAndFiles) {
  wt::MpiCommunicator comm(MPI_COMM_WORLD);
  if (comm.size() != 2) GTEST_SKIP() << "needs 2 ranks";
  const bool stale = comm.rank() == 1;
  const auto [status, message] = agree(comm, digest(stale ? 999 : 1000, stale ? 41 : 42),
                                       stale ? "/stale/d.h5" : "/shared/d.h5");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(message.rfind("wavetrain: error: /stale/d.h5: the ranks read different copies", 0), 0u)
      << message;
  for (const char* want : {"rank 1 (host ", "rank 0 (host ", "reads /shared/d.h5",
                           "they differ: train samples 999 vs 1000.",
                           "Ranks whose copy differs from rank 0's: 1 (1 of 2 ranks)"})
    EXPECT_NE(message.find(want), std::string::npos) << want << " in: " << message;
  // Every rank holds the same message (rank 0 prints it).
  int length = int(message.size()), longest = 0;
  MPI_Allreduce(&length, &longest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(length, longest);
}

}  // namespace
