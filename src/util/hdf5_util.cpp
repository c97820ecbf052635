#include "util/hdf5_util.hpp"

#include <stdexcept>

namespace wt {

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

void hdf5_silence_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

H5Handle& H5Handle::operator=(H5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = other.id_;
    closer_ = other.closer_;
    other.id_ = -1;
  }
  return *this;
}

void H5Handle::reset() {
  if (id_ >= 0 && closer_) closer_(id_);
  id_ = -1;
}

namespace {

// Opens attribute `name` of `obj`, or returns an invalid handle when it does not exist.
H5Handle open_attr(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return {};
  H5Handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) throw std::runtime_error(std::string("cannot open attribute ") + name);
  return attr;
}

int64_t attr_element_count(hid_t attr) {
  H5Handle space(H5Aget_space(attr), H5Sclose);
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) throw std::runtime_error("cannot read attribute dataspace");
  return n;
}

void read_scalar(hid_t obj, const char* name, hid_t mem_type, void* out, H5T_class_t want) {
  H5Handle attr = open_attr(obj, name);
  H5Handle type(H5Aget_type(attr.get()), H5Tclose);
  H5T_class_t cls = H5Tget_class(type.get());
  bool numeric = cls == H5T_INTEGER || cls == H5T_FLOAT;
  if (!numeric || (want == H5T_INTEGER && cls != H5T_INTEGER) ||
      attr_element_count(attr.get()) != 1)
    throw std::runtime_error(std::string("attribute ") + name + " is not a single number");
  if (H5Aread(attr.get(), mem_type, out) < 0)
    throw std::runtime_error(std::string("cannot read attribute ") + name);
}

void write_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, hid_t space,
                const void* data) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  H5Handle attr(H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), mem_type, data) < 0)
    throw std::runtime_error(std::string("cannot write attribute ") + name);
}

H5Handle vlen_string_type() {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

}  // namespace

bool h5_read_attr_double(hid_t obj, const char* name, double* value) {
  if (H5Aexists(obj, name) <= 0) return false;
  read_scalar(obj, name, H5T_NATIVE_DOUBLE, value, H5T_FLOAT);
  return true;
}

bool h5_read_attr_doubles(hid_t obj, const char* name, std::vector<double>* values) {
  H5Handle attr = open_attr(obj, name);
  if (!attr.valid()) return false;
  H5Handle type(H5Aget_type(attr.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  H5Handle space(H5Aget_space(attr.get()), H5Sclose);
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Sget_simple_extent_ndims(space.get()) > 1)
    throw std::runtime_error(std::string("attribute ") + name +
                             " is not a number or a 1-D array of numbers");
  values->assign(size_t(attr_element_count(attr.get())), 0.0);
  if (!values->empty() && H5Aread(attr.get(), H5T_NATIVE_DOUBLE, values->data()) < 0)
    throw std::runtime_error(std::string("cannot read attribute ") + name);
  return true;
}

bool h5_read_attr_int(hid_t obj, const char* name, int64_t* value) {
  if (H5Aexists(obj, name) <= 0) return false;
  read_scalar(obj, name, H5T_NATIVE_INT64, value, H5T_INTEGER);
  return true;
}

bool h5_read_attr_strings(hid_t obj, const char* name, std::vector<std::string>* values) {
  H5Handle attr = open_attr(obj, name);
  if (!attr.valid()) return false;
  H5Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw std::runtime_error(std::string("attribute ") + name + " is not a string");
  const int64_t n = attr_element_count(attr.get());
  values->clear();
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Handle mem_type = vlen_string_type();
    std::vector<char*> ptrs(static_cast<size_t>(n), nullptr);
    if (H5Aread(attr.get(), mem_type.get(), ptrs.data()) < 0)
      throw std::runtime_error(std::string("cannot read attribute ") + name);
    for (char* p : ptrs) values->emplace_back(p ? p : "");
    H5Handle space(H5Aget_space(attr.get()), H5Sclose);
    H5Dvlen_reclaim(mem_type.get(), space.get(), H5P_DEFAULT, ptrs.data());
  } else {
    const size_t width = H5Tget_size(type.get());
    H5Handle mem_type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem_type.get(), width);
    std::vector<char> buffer(width * static_cast<size_t>(n));
    if (H5Aread(attr.get(), mem_type.get(), buffer.data()) < 0)
      throw std::runtime_error(std::string("cannot read attribute ") + name);
    for (int64_t i = 0; i < n; ++i) {
      std::string s(buffer.data() + i * width, width);
      values->push_back(s.substr(0, s.find('\0')));  // fixed-length strings are NUL-padded
    }
  }
  return true;
}

bool h5_read_attr_string(hid_t obj, const char* name, std::string* value) {
  std::vector<std::string> values;
  if (!h5_read_attr_strings(obj, name, &values)) return false;
  if (values.size() != 1)
    throw std::runtime_error(std::string("attribute ") + name + " is not a single string");
  *value = values[0];
  return true;
}

void h5_write_attr_double(hid_t obj, const char* name, double value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), &value);
}

void h5_write_attr_int(hid_t obj, const char* name, int64_t value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  write_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space.get(), &value);
}

void h5_write_attr_string(hid_t obj, const char* name, const std::string& value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle type = vlen_string_type();
  const char* ptr = value.c_str();
  write_attr(obj, name, type.get(), type.get(), space.get(), &ptr);
}

void h5_write_attr_strings(hid_t obj, const char* name, const std::vector<std::string>& values) {
  hsize_t n = values.size();
  H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Handle type = vlen_string_type();
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  write_attr(obj, name, type.get(), type.get(), space.get(), ptrs.data());
}

}  // namespace wt
