// Converts a plain text corpus into a character-level language-modelling HDF5 dataset
// (see src/data/text_convert.hpp). Exit status: 0 done, 2 bad input, 1 other.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "data/text_convert.hpp"
#include "tool_command_line.hpp"
#include "util/input_error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Convert a text file into a character-level language-modelling dataset: /train and /test "
      "splits of inputs [N, T] (uint8 character ids) and labels [N, T] (the next character)."};
  std::string input, output;
  wt::TextConvertOptions options;
  app.add_option("--input", input, "text file (any bytes)")->required();
  app.add_option("--output", output, "HDF5 file to write (replaced atomically)")->required();
  app.add_option("--seq-len", options.seq_len, "characters per sequence (T)")
      ->capture_default_str();
  app.add_option("--test-fraction", options.test_fraction,
                 "share of the text, taken from its end, for the test split")
      ->capture_default_str();
  app.add_flag("--byte-vocab", options.byte_vocab,
               "use all 256 byte values as the vocabulary instead of the text's character set");
  app.add_option("--source", options.source, "provenance string stored in the file");
  if (const int rc = wt::tools::parse_tool_command_line(app, argc, argv);
      rc != wt::tools::kContinue)
    return rc;
  return wt::tools::run_reporting_errors("text_to_hdf5", [&]() -> int {
    const auto started = std::chrono::steady_clock::now();
    wt::tools::require_output_directory(output);
    if (options.source.empty())
      options.source = std::filesystem::absolute(input).string() + ", converted by text_to_hdf5";
    const wt::TextConvertResult r = wt::convert_text_to_hdf5(input, output, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf(
        "wrote %s: %lld characters, vocabulary %lld, train %lld, test %lld sequences of %lld, "
        "%.1f MB in %.2f s\n",
        output.c_str(), (long long)r.characters, (long long)r.vocab_size,
        (long long)r.train_sequences, (long long)r.test_sequences, (long long)options.seq_len,
        std::filesystem::file_size(output) / 1e6, seconds);
    return 0;
  });
}
