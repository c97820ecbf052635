#include "model/param_layout.hpp"

namespace wt {

namespace {

// Layer names come from the model file: escaped, so that any name stays valid JSON.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      const char* hex = "0123456789abcdef";
      out += std::string("\\u00") + hex[(c >> 4) & 0xf] + hex[c & 0xf];
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string entry(const std::string& name, int64_t offset, const Shape& shape) {
  std::string dims;
  for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "{\"name\": " + json_string(name) + ", \"offset\": " + std::to_string(offset) +
         ", \"shape\": [" + dims + "]}";
}

}  // namespace

std::string stage_layout_json(const Stage& stage) {
  std::string params;
  for (size_t i = 0; i < stage.params.size(); ++i)
    params += (i ? ",\n  " : "") +
              entry(stage.params[i].name, stage.param_offsets[i], stage.param_shapes[i]);
  // Buffers follow one another in the same order (Model's constructor), each after the last.
  std::string buffers;
  int64_t offset = 0;
  for (size_t i = 0; i < stage.buffers.size(); ++i) {
    const Buffer& b = stage.buffers[i];
    buffers += (i ? ",\n  " : "") + entry(b.name, offset, b.value.shape());
    offset += shape_numel(b.value.shape());
  }
  return "{\"params\": [\n  " + params + "],\n \"buffers\": [\n  " + buffers + "]}\n";
}

}  // namespace wt
