#pragma once
// The one error type for bad user input (decks, model files, datasets, checkpoints, command
// lines). main() prints what() and exits with status 2; nothing else may turn bad input into a
// crash or a stack trace.
#include <stdexcept>
#include <string>

namespace wt {

class InputError : public std::runtime_error {
 public:
  // file: the offending file ("" for the command line); line: 1-based, 0 when unknown;
  // key: the dotted key or dataset path; message: what is wrong and what is allowed.
  InputError(std::string file, int line, std::string key, const std::string& message)
      : std::runtime_error(format(file, line, key, message)),
        file_(std::move(file)),
        line_(line),
        key_(std::move(key)) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }

  static std::string format(const std::string& file, int line, const std::string& key,
                            const std::string& message) {
    std::string where = file.empty() ? std::string("command line") : file;
    if (line > 0) where += ":" + std::to_string(line);
    if (!key.empty()) where += ": " + key;
    return where + ": " + message;
  }

 private:
  std::string file_;
  int line_;
  std::string key_;
};

}  // namespace wt
