#include "job/dataset_agreement.hpp"

#include <unistd.h>

#include <vector>

#include "comm/failure_agreement.hpp"
#include "util/agreed_error.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

constexpr size_t kListedRanks = 16;  // the message lists this many differing ranks, then a count

std::string host_name() {
  char name[256] = "";
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}

struct Where {
  std::string host, path;
};

Where where_rank_reads(Communicator& comm, int root, const std::string& path) {
  std::string text = comm.rank() == root ? host_name() + "\n" + path : std::string();
  broadcast_text(comm, text, root);
  const size_t cut = text.find('\n');
  return {text.substr(0, cut), cut == std::string::npos ? "" : text.substr(cut + 1)};
}

std::string rank_list(const std::vector<int>& ranks, int of) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < kListedRanks; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kListedRanks)
    s += " and " + std::to_string(ranks.size() - kListedRanks) + " more";
  return s + " (" + std::to_string(ranks.size()) + " of " + std::to_string(of) + " ranks)";
}

}  // namespace

void agree_on_dataset(Communicator& comm, const DatasetDigest& mine, const std::string& path) {
  std::array<uint32_t, DatasetDigest::kWords> words = mine.words();
  comm.broadcast_bytes(words.data(), int64_t(sizeof words), 0);
  const DatasetDigest first = DatasetDigest::from_words(words);

  std::vector<double> differs(size_t(comm.size()), 0.0);
  if (mine != first) differs[size_t(comm.rank())] = 1.0;
  comm.allreduce_sum(differs.data(), int64_t(differs.size()), 0);
  std::vector<int> ranks;
  for (int r = 0; r < comm.size(); ++r)
    if (differs[size_t(r)] > 0) ranks.push_back(r);
  if (ranks.empty()) return;

  // Every rank takes this branch together: name rank 0's copy and the first differing one.
  const int other = ranks.front();
  std::array<uint32_t, DatasetDigest::kWords> other_words = mine.words();
  comm.broadcast_bytes(other_words.data(), int64_t(sizeof other_words), other);
  const DatasetDigest theirs = DatasetDigest::from_words(other_words);
  const Where at0 = where_rank_reads(comm, 0, path);
  const Where at = where_rank_reads(comm, other, path);
  const std::string r = "rank " + std::to_string(other);
  const InputError error(
      at.path, 0, "",
      "the ranks read different copies of the dataset: " + r + " (host " + at.host +
          ") reads this file, rank 0 (host " + at0.host + ") reads " + at0.path +
          "; they differ: " + digest_differences(theirs, first) + ". " + r + ": " +
          theirs.describe() + "; rank 0: " + first.describe() +
          ". Ranks whose copy differs from rank 0's: " + rank_list(ranks, comm.size()) +
          ". Every rank must read the same data: copy the dataset to their nodes again, or point "
          "data.path at one shared copy");
  throw AgreedError(2, failure_line(error, comm.rank()));
}

}  // namespace wt
