#pragma once
// Input deck (TOML) -> validated RunConfig. Every problem throws wt::InputError naming the deck,
// the line and the section.key, with a message that says what is allowed (see deck/schema.cpp).
#include <string>
#include <vector>

#include "deck/run_config.hpp"

namespace wt {

// A "section.key=value" set over a deck's own value from elsewhere (a co-location deck's key
// applied to each of its jobs): errors about it name `file` and `line` ("" and 0: the command
// line), and a relative path in it resolves against the file's directory.
struct PlacedOverride {
  std::string text;
  std::string file;
  int line = 0;
};

// Parses and validates the deck at `path`, then applies `placed`, then `overrides`
// ("section.key=value", the value read as TOML; string keys also accept a bare word). Relative
// data.path / model.file in the deck resolve against the deck's directory, in overrides against
// the working directory; both files must exist. Errors in overrides name the command line (file
// "").
RunConfig parse_deck(const std::string& path, const std::vector<std::string>& overrides = {},
                     const std::vector<PlacedOverride>& placed = {});

// Same, from deck text already in memory (e.g. the resolved deck stored in a checkpoint).
// `deck_path` names it in errors and anchors relative paths.
RunConfig parse_deck_text(const std::string& text, const std::string& deck_path,
                          const std::vector<std::string>& overrides = {},
                          const std::vector<PlacedOverride>& placed = {});

// The fully resolved deck: every key, defaults filled in, absolute paths, one comment per key.
// parse_deck_text(to_toml(c), ...) reproduces c.
std::string to_toml(const RunConfig& config);

}  // namespace wt
