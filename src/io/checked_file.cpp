#include "io/checked_file.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace wt {

std::string write_failure(const std::string& what, const std::string& path, int error) {
  return what + " " + path + ": " + std::strerror(error != 0 ? error : errno);
}

CheckedFile::CheckedFile(const std::string& path, const char* mode)
    : file_(std::fopen(path.c_str(), mode)), path_(path) {
  if (!file_) throw std::runtime_error(write_failure("cannot open for writing", path));
}

CheckedFile::~CheckedFile() {
  if (file_) std::fclose(file_);
}

CheckedFile::CheckedFile(CheckedFile&& other) noexcept
    : file_(std::exchange(other.file_, nullptr)), path_(std::move(other.path_)) {}

CheckedFile& CheckedFile::operator=(CheckedFile&& other) noexcept {
  if (this != &other) {
    if (file_) std::fclose(file_);
    file_ = std::exchange(other.file_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void CheckedFile::write(const std::string& text) {
  if (!file_) throw std::logic_error("write to a closed file: " + path_);
  errno = 0;
  const bool ok =
      std::fwrite(text.data(), 1, text.size(), file_) == text.size() && std::fflush(file_) == 0;
  if (!ok) {
    const int error = errno != 0 ? errno : EIO;
    std::clearerr(file_);
    throw std::runtime_error(write_failure("cannot write", path_, error));
  }
}

void CheckedFile::close() {
  if (!file_) return;
  std::FILE* f = std::exchange(file_, nullptr);
  errno = 0;
  if (std::fclose(f) != 0)
    throw std::runtime_error(write_failure("cannot write", path_, errno != 0 ? errno : EIO));
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string temp = path + ".tmp";
  try {
    CheckedFile file(temp, "w");
    file.write(contents);
    file.close();
  } catch (...) {
    std::remove(temp.c_str());
    throw;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temp.c_str());
    throw std::runtime_error(write_failure("cannot replace", path, error));
  }
}

}  // namespace wt
