#pragma once
// What every small tool in tools/ does with its command line and its errors: CLI11 prints --help
// (exit 0) or a usage error (exit 2, wavetrain's status for bad input), an --output path must lie
// in an existing directory before any work starts, and errors end the tool with 2 or 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "util/input_error.hpp"

namespace wt::tools {

constexpr int kContinue = -1;

// kContinue when the tool should go on, else the exit status to return from main.
inline int parse_tool_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return kContinue;
}

// Throws InputError naming --output when the file's directory does not exist.
inline void require_output_directory(const std::string& output) {
  const std::filesystem::path out_path(output);
  const std::filesystem::path parent =
      out_path.has_parent_path() ? out_path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent))
    throw InputError("", 0, "--output", "directory " + parent.string() + " does not exist");
}

// Runs a tool's work and turns what escapes it into the exit status: bad input (InputError) 2,
// anything else 1, each reported on stderr as "<tool>: ...".
template <typename Body>
int run_reporting_errors(const char* tool, Body body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 1;
  }
}

}  // namespace wt::tools
