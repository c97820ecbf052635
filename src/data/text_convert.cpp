#include "data/text_convert.hpp"

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "data/dataset_writer.hpp"
#include "util/input_error.hpp"

namespace wt {

std::string token_name(unsigned char c) {
  if (c == '\n') return "\\n";
  if (c == '\t') return "\\t";
  if (c == '\\') return "\\\\";
  if (c >= 0x20 && c < 0x7f) return std::string(1, char(c));
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

namespace {

// Sequences of T+1 ids with stride T over ids[begin, end).
DatasetSplit make_split(const std::string& name, const std::vector<uint8_t>& ids, size_t begin,
                        size_t end, int64_t T) {
  DatasetSplit split;
  split.name = name;
  split.sample_shape = {T};
  split.label_shape = {T};
  const size_t t = size_t(T);
  for (size_t s = begin; end >= t + 1 && s + t + 1 <= end; s += t) {
    split.inputs_u8.insert(split.inputs_u8.end(), ids.begin() + long(s), ids.begin() + long(s + t));
    for (size_t i = 1; i <= t; ++i) split.labels.push_back(int32_t(ids[s + i]));
  }
  return split;
}

}  // namespace

TextConvertResult convert_text_to_hdf5(const std::string& text_path, const std::string& output,
                                       const TextConvertOptions& options) {
  if (options.seq_len < 1 || options.seq_len > (int64_t(1) << 20))
    throw InputError("", 0, "--seq-len", "must be in [1, 1048576]");
  if (!(options.test_fraction > 0.0 && options.test_fraction < 1.0))
    throw InputError("", 0, "--test-fraction", "must be strictly between 0 and 1");
  std::ifstream in(text_path, std::ios::binary);
  if (!in) throw InputError(text_path, 0, "", "cannot open the text file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  std::array<int, 256> id{};
  id.fill(-1);
  std::vector<std::string> names;
  for (int c = 0; c < 256; ++c) {
    const bool used = options.byte_vocab || text.find(char(c)) != std::string::npos;
    if (!used) continue;
    id[size_t(c)] = int(names.size());
    names.push_back(token_name(static_cast<unsigned char>(c)));
  }
  std::vector<uint8_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    ids[i] = uint8_t(id[static_cast<unsigned char>(text[i])]);

  const size_t test_chars = size_t(double(text.size()) * options.test_fraction);
  const size_t boundary = text.size() - test_chars;
  const int64_t T = options.seq_len;
  std::vector<DatasetSplit> splits{make_split("train", ids, 0, boundary, T),
                                   make_split("test", ids, boundary, text.size(), T)};
  for (const auto& s : splits)
    if (s.labels.empty())
      throw InputError(text_path, 0, "",
                       "text of " + std::to_string(text.size()) +
                           " characters is too short for a " + s.name + " sequence of " +
                           std::to_string(T + 1) +
                           " characters (lower --seq-len or raise --test-fraction)");
  DatasetInfo info;
  info.num_classes = int64_t(names.size());
  info.class_names = names;
  info.token_ids = true;
  info.source = options.source;
  write_dataset(output, splits, info);

  TextConvertResult r;
  r.characters = int64_t(text.size());
  r.vocab_size = int64_t(names.size());
  r.train_sequences = int64_t(splits[0].labels.size()) / T;
  r.test_sequences = int64_t(splits[1].labels.size()) / T;
  return r;
}

}  // namespace wt
