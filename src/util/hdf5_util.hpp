#pragma once
// Small shared pieces for every HDF5 user in wavetrain: the process-wide HDF5 lock, silencing of
// HDF5's own error printing, and an RAII handle so no hid_t leaks on an exception path.
//
// Debian's HDF5 (and most cluster builds) is not compiled thread-safe, and the data loader reads
// on a background thread. Every call into the HDF5 library, from any module (data/, io/
// checkpoints, traces), must therefore hold hdf5_mutex().
#include <hdf5.h>

#include <mutex>
#include <string>
#include <vector>

namespace wt {

// The one lock around all HDF5 calls in this process. Recursive so helpers may nest.
std::recursive_mutex& hdf5_mutex();

// Turns off HDF5's automatic error-stack printing (once per process); failures are reported
// through our own exceptions instead. Call with hdf5_mutex() held.
void hdf5_silence_errors();

// Owns one HDF5 identifier and closes it with the matching H5*close function.
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~H5Handle() { reset(); }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  H5Handle& operator=(H5Handle&& other) noexcept;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Attribute helpers (caller holds hdf5_mutex()). Readers return false when the attribute is
// absent and throw std::runtime_error when it exists but cannot be read as the requested type.
bool h5_read_attr_double(hid_t obj, const char* name, double* value);
// A number or a 1-D array of numbers (a scalar gives one value).
bool h5_read_attr_doubles(hid_t obj, const char* name, std::vector<double>* values);
bool h5_read_attr_int(hid_t obj, const char* name, int64_t* value);
bool h5_read_attr_string(hid_t obj, const char* name, std::string* value);
bool h5_read_attr_strings(hid_t obj, const char* name, std::vector<std::string>* values);

void h5_write_attr_double(hid_t obj, const char* name, double value);
void h5_write_attr_int(hid_t obj, const char* name, int64_t value);
void h5_write_attr_string(hid_t obj, const char* name, const std::string& value);
void h5_write_attr_strings(hid_t obj, const char* name, const std::vector<std::string>& values);

}  // namespace wt
