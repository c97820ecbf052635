#include "job/run_identity.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "io/checked_file.hpp"
#include "util/input_error.hpp"

namespace wt {

std::string new_run_id() {
  char when[32] = "unknown";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc)) std::strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &utc);
  std::random_device random;  // the kernel's entropy: two runs started at once still differ
  const uint64_t bits = (uint64_t(random()) << 32) ^ uint64_t(random());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)bits);
  return std::string(when) + "-" + hex;
}

bool valid_run_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

std::string load_or_create_run_id(const std::string& run_dir, bool* created) {
  const std::string path = (std::filesystem::path(run_dir) / kRunIdFile).string();
  std::error_code ec;
  const bool missing = !std::filesystem::exists(path, ec);
  if (created) *created = missing;
  if (missing) {
    const std::string id = new_run_id();
    try {
      write_file_atomically(path, id + "\n");
    } catch (const std::runtime_error& e) {
      throw InputError(path, 0, "", std::string("cannot record the run's identity: ") + e.what());
    }
    return id;
  }
  std::ifstream in(path);
  std::string id, rest;
  if (!(in >> id) || (in >> rest) || !valid_run_id(id))
    throw InputError(path, 0, "",
                     "not a run identity (one word of letters, digits, '-' and '_' expected); "
                     "it names the run whose checkpoints this run may resume: restore it, or "
                     "remove it to make this directory a new run");
  return id;
}

}  // namespace wt
