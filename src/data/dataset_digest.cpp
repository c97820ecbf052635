#include "data/dataset_digest.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "data/dataset_reader.hpp"

namespace wt {

namespace {

constexpr int kSplitFields = 4 + SplitDigest::kMaxDims;

// A 64-bit checksum, eight bytes at a time (labels can be millions of values): each word is mixed
// into the state with a multiply and rotations, a zero-padded tail likewise, then the length. Not
// cryptographic; it tells an honest stale copy from the current one.
class Checksum {
 public:
  void add(const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      mix(w);
    }
    if (i < bytes) {
      uint64_t w = 0;
      std::memcpy(&w, p + i, bytes - i);
      mix(w ^ (uint64_t(bytes - i) << 56));
    }
    mix(uint64_t(bytes));
  }
  void add(int64_t v) { add(&v, sizeof v); }
  void add(double v) { add(&v, sizeof v); }
  void add(const std::string& s) { add(s.data(), s.size()); }
  uint64_t value() const { return state_ ^ (state_ >> 29); }

 private:
  void mix(uint64_t w) {
    w *= 0x9E3779B97F4A7C15ull;
    w ^= w >> 32;
    state_ = (state_ ^ w) * 0xBF58476D1CE4E5B9ull;
    state_ ^= state_ >> 31;
  }
  uint64_t state_ = 0x6A09E667F3BCC909ull;
};

SplitDigest split_digest(const DatasetReader& r) {
  SplitDigest d;
  d.samples = r.size();
  d.is_float = r.inputs_are_float() ? 1 : 0;
  const Shape shape = r.sample_shape();
  d.dims = int64_t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t at = std::min(i, size_t(SplitDigest::kMaxDims - 1));
    d.shape[at] = at == i ? shape[i] : d.shape[at] * shape[i];
  }
  d.labels_per_sample = r.labels_per_sample();
  return d;
}

void add_attributes(const DatasetReader& r, Checksum& sum) {
  for (double m : r.means()) sum.add(m);  // one value each under global scaling, as before
  for (double s : r.stds()) sum.add(s);
  sum.add(r.declared_classes());
  sum.add(int64_t(r.token_ids()));
  sum.add(int64_t(r.class_names().size()));
  for (const std::string& name : r.class_names()) sum.add(name);
}

// Every label (already in memory, in blocks), and the inputs of kSampledRows rows spread evenly
// over the split, first and last included.
void add_rows(DatasetReader& r, Checksum& sum) {
  const int64_t n = r.size(), per = r.labels_per_sample();
  constexpr int64_t kBlock = 4096;
  std::vector<int64_t> rows;
  std::vector<int32_t> labels;
  for (int64_t start = 0; start < n; start += kBlock) {
    rows.resize(size_t(std::min(kBlock, n - start)));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = start + int64_t(i);
    labels.resize(rows.size() * size_t(per));
    r.read(rows, nullptr, labels.data());
    sum.add(labels.data(), labels.size() * sizeof(int32_t));
  }
  if (n == 0) return;
  const int64_t k = std::min<int64_t>(n, DatasetDigest::kSampledRows);
  rows.resize(size_t(k));
  for (int64_t i = 0; i < k; ++i) rows[size_t(i)] = k == 1 ? 0 : i * (n - 1) / (k - 1);
  std::vector<float> inputs(size_t(k * r.sample_numel()));
  r.read(rows, inputs.data(), nullptr);
  sum.add(inputs.data(), inputs.size() * sizeof(float));
}

std::string shape_text(const SplitDigest& d) {
  std::string s = "[";
  for (int64_t i = 0; i < std::min<int64_t>(d.dims, SplitDigest::kMaxDims); ++i)
    s += (i ? ", " : "") + std::to_string(d.shape[size_t(i)]);
  return s + "]";
}

std::string split_text(const SplitDigest& d) {
  std::string s =
      std::to_string(d.samples) + " x " + shape_text(d) + (d.is_float ? " float32" : " uint8");
  if (d.labels_per_sample != 1) s += ", " + std::to_string(d.labels_per_sample) + " labels each";
  return s;
}

std::string hex(uint64_t v) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

void compare_split(const char* name, const SplitDigest& a, const SplitDigest& b,
                   std::vector<std::string>& out) {
  const std::string n = name;
  if (a.samples != b.samples)
    out.push_back(n + " samples " + std::to_string(a.samples) + " vs " + std::to_string(b.samples));
  if (a.dims != b.dims || a.shape != b.shape)
    out.push_back(n + " sample shape " + shape_text(a) + " vs " + shape_text(b));
  if (a.is_float != b.is_float)
    out.push_back(n + " inputs " + (a.is_float ? "float32" : "uint8") + " vs " +
                  (b.is_float ? "float32" : "uint8"));
  if (a.labels_per_sample != b.labels_per_sample)
    out.push_back(n + " labels per sample " + std::to_string(a.labels_per_sample) + " vs " +
                  std::to_string(b.labels_per_sample));
}

}  // namespace

std::array<uint32_t, DatasetDigest::kWords> DatasetDigest::words() const {
  static_assert(kWords == 2 * (2 * kSplitFields + 2), "two words per 64-bit field");
  std::array<uint32_t, kWords> w{};
  size_t at = 0;
  auto put = [&](uint64_t v) {
    w[at++] = uint32_t(v);
    w[at++] = uint32_t(v >> 32);
  };
  for (const SplitDigest* s : {&train, &test}) {
    put(uint64_t(s->samples));
    put(uint64_t(s->is_float));
    put(uint64_t(s->dims));
    for (int64_t d : s->shape) put(uint64_t(d));
    put(uint64_t(s->labels_per_sample));
  }
  put(attributes);
  put(rows);
  return w;
}

DatasetDigest DatasetDigest::from_words(const std::array<uint32_t, kWords>& w) {
  DatasetDigest d;
  size_t at = 0;
  auto get = [&]() {
    const uint64_t v = uint64_t(w[at]) | (uint64_t(w[at + 1]) << 32);
    at += 2;
    return v;
  };
  for (SplitDigest* s : {&d.train, &d.test}) {
    s->samples = int64_t(get());
    s->is_float = int64_t(get());
    s->dims = int64_t(get());
    for (int64_t& dim : s->shape) dim = int64_t(get());
    s->labels_per_sample = int64_t(get());
  }
  d.attributes = get();
  d.rows = get();
  return d;
}

std::string DatasetDigest::describe() const {
  return "train " + split_text(train) + ", test " + split_text(test) + ", attributes checksum " +
         hex(attributes) + ", rows checksum " + hex(rows);
}

DatasetDigest dataset_digest(DatasetReader& train, DatasetReader& test) {
  DatasetDigest d;
  d.train = split_digest(train);
  d.test = split_digest(test);
  Checksum attributes;
  add_attributes(train, attributes);
  d.attributes = attributes.value();
  Checksum rows;
  add_rows(train, rows);
  add_rows(test, rows);
  d.rows = rows.value();
  return d;
}

std::string digest_differences(const DatasetDigest& a, const DatasetDigest& b) {
  std::vector<std::string> out;
  compare_split("train", a.train, b.train, out);
  compare_split("test", a.test, b.test, out);
  if (a.attributes != b.attributes)
    out.push_back("attributes checksum " + hex(a.attributes) + " vs " + hex(b.attributes) +
                  " (mean, std, classes or class names)");
  if (a.rows != b.rows && out.empty())
    out.push_back("rows checksum " + hex(a.rows) + " vs " + hex(b.rows) +
                  " (same shapes, different labels or sampled inputs)");
  std::string s;
  for (const std::string& o : out) s += (s.empty() ? "" : "; ") + o;
  return s;
}

}  // namespace wt
