// YAML 1.2 core-schema resolution of plain scalars, and the reverse question the writer asks:
// may this string be written plain and still read back as the same string?
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "amanda/ir/value.h"

namespace amanda::text {

enum class PlainKind { Null, Bool, Int, Float, String, IntOverflow };
PlainKind classify_plain(std::string_view s);
// The value of a plain scalar; throws nothing: an out-of-range integer is reported as IntOverflow
// by classify_plain and read here as a float.
ir::Value resolve_plain(std::string_view s);
std::optional<int64_t> parse_int(std::string_view s);
std::optional<double> parse_float(std::string_view s);
// True when s can be written as a plain scalar (in flow context when `flow`) and reads back as
// the string s under YAML 1.1 and 1.2 readers alike.
bool plain_safe(std::string_view s, bool flow);
// Shortest text that reads back as exactly d, always recognisable as a float.
std::string format_float(double d, bool json);

}  // namespace amanda::text
