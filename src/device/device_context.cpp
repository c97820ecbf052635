#include "device/device_context.hpp"

namespace wt {

DeviceContext::DeviceContext(size_t memory_limit) : allocator_(memory_limit, &events_) {}

}  // namespace wt
