#pragma once
// Turns a plain text file into a character-level language-modelling dataset (ARCHITECTURE.md
// "Data formats"): /<split>/inputs [N, T] uint8 token ids and /<split>/labels [N, T] int32, the
// next character of every position. Sequences are T+1 characters taken with stride T, so every
// character is predicted exactly once. The test split is the tail of the text (no sequence
// crosses the boundary, so no test character is ever trained on). The vocabulary is the sorted
// set of bytes the text uses (or all 256 bytes), stored as class_names, one character each, with
// token_ids = 1 so the reader hands ids through unnormalised.
#include <cstdint>
#include <string>
#include <vector>

namespace wt {

struct TextConvertOptions {
  int64_t seq_len = 64;         // T
  double test_fraction = 0.05;  // share of the text (from its end) for the test split
  bool byte_vocab = false;      // 256 byte ids instead of the text's own character set
  std::string source;           // provenance attribute
};

struct TextConvertResult {
  int64_t characters = 0;
  int64_t vocab_size = 0;
  int64_t train_sequences = 0, test_sequences = 0;
};

// The printable name of one vocabulary entry: the character itself, or an escape (\n, \t, \xNN).
std::string token_name(unsigned char c);

// Throws wt::InputError for an unreadable or too short text and for bad options.
TextConvertResult convert_text_to_hdf5(const std::string& text_path, const std::string& output,
                                       const TextConvertOptions& options);

}  // namespace wt
