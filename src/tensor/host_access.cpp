#include "tensor/host_access.hpp"

namespace wt {

namespace {
// Per thread: a preload thread never runs device work, the rank's thread does at its
// synchronisation points.
thread_local int device_work_depth = 0;
}  // namespace

bool in_device_work() { return device_work_depth > 0; }

DeviceWorkScope::DeviceWorkScope() { ++device_work_depth; }
DeviceWorkScope::~DeviceWorkScope() { --device_work_depth; }

}  // namespace wt
