#pragma once
// Writing the run directory's text files (log, metrics, summary, deck) so that a failed write is
// an error naming the file and the system's reason ("No space left on device"), never silence:
// every write is flushed and checked, and a file is only reported written once its close
// succeeded.
#include <cstdio>
#include <string>

namespace wt {

class CheckedFile {
 public:
  CheckedFile() = default;
  // mode: "w" or "a". Throws std::runtime_error naming the path and the reason.
  CheckedFile(const std::string& path, const char* mode);
  ~CheckedFile();
  CheckedFile(CheckedFile&& other) noexcept;
  CheckedFile& operator=(CheckedFile&& other) noexcept;
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;

  bool is_open() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }
  // Appends and flushes to the kernel; throws naming the file and the reason on failure.
  void write(const std::string& text);
  // Closes; throws if the close reports a failed write (a full disk on NFS, say).
  void close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

// "cannot write PATH: REASON" for the current errno (or `error` when non-zero).
std::string write_failure(const std::string& what, const std::string& path, int error = 0);

// Writes `contents` to path through path.tmp and a rename, so a failure leaves any previous
// version whole. Throws like CheckedFile.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace wt
