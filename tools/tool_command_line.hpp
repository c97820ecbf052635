#pragma once
// What every small tool in tools/ does with its command line: CLI11 prints --help (exit 0) or a
// usage error (exit 2, wavetrain's status for bad input), and an --output path must lie in an
// existing directory before any work starts.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

#include "deck/input_error.hpp"

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

}  // namespace wt::tools
