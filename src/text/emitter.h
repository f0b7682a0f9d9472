// Emitters: the writer walks a document once and drives one of these. The YAML emitter writes the
// block style of the seed (flow style for edge endpoints and short scalar lists); the JSON one
// writes the same tree, indented. Both append to one string buffer (no per-node allocation).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace amanda::text {

class Emitter {
 public:
  virtual ~Emitter() = default;
  // `tag` ("!tensor", "!graph") marks a typed mapping: a YAML tag, or in JSON a one-key wrapper
  // object {"$tensor": {...}}.
  virtual void begin_map(bool flow = false, std::string_view tag = {}) = 0;
  virtual void end_map() = 0;
  virtual void begin_seq(bool flow = false) = 0;
  virtual void end_seq() = 0;
  virtual void key(std::string_view k) = 0;
  virtual void str(std::string_view s) = 0;
  virtual void integer(int64_t v) = 0;
  virtual void real(double v) = 0;
  virtual void boolean(bool b) = 0;
  virtual void null() = 0;
  // Text the writer may append directly, e.g. base64 (must be a plain-safe token).
  virtual void raw_str(std::string_view token) = 0;
  virtual std::string& buffer() = 0;
};

std::unique_ptr<Emitter> make_yaml_emitter(std::string& out, uint32_t max_depth);
std::unique_ptr<Emitter> make_json_emitter(std::string& out, uint32_t max_depth);

}  // namespace amanda::text
