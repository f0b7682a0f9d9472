// A stream of parse events shared by the YAML and the JSON readers, so that one builder turns
// either text form into the IR. YAML comes from libyaml's event parser, JSON from RapidJSON's
// iterative (token by token) reader; neither recurses, so deep input cannot overflow the stack.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "amanda/support/diagnostics.h"

namespace amanda::text {

struct Event {
  enum Type : uint8_t { MapStart, MapEnd, SeqStart, SeqEnd, Scalar, End };
  // How a scalar was written: YAML plain scalars are resolved by the YAML 1.2 core schema;
  // quoted ones are strings; JSON scalars come typed.
  enum Style : uint8_t { Plain, Quoted, Null, Bool, Int, Float, String };
  Type type = End;
  Style style = Plain;
  bool flow = false;  // a flow collection ({...} / [...])
  std::string text;   // scalar text (for JSON numbers: their source text)
  std::string tag;    // YAML tag, e.g. "!tensor" (empty when none)
  uint32_t line = 0, column = 0;
};

struct Limits {
  uint32_t max_depth = 512;                // nested maps and sequences
  uint64_t max_alias_events = 1'000'000;   // events that YAML aliases may replay in total
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  // Fills ev with the next event; throws ParseError with file:line:column on malformed input.
  virtual void next(Event& ev) = 0;
  virtual const std::string& file() const = 0;
};

std::unique_ptr<EventSource> make_yaml_source(std::string_view text, std::string file, Limits limits = {});
std::unique_ptr<EventSource> make_json_source(std::string_view text, std::string file, Limits limits = {});

}  // namespace amanda::text
