#include "scalars.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace amanda::text {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_int_text(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i == s.size()) return false;
  if (s.size() - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'o')) {
    for (size_t j = i + 2; j < s.size(); ++j)
      if (!(is_digit(s[j]) || (s[i + 1] == 'x' && std::strchr("abcdefABCDEF", s[j])))) return false;
    return true;
  }
  for (; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

bool is_special_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return s == ".inf" || s == ".Inf" || s == ".INF" || s == ".nan" || s == ".NaN" || s == ".NAN";
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool is_float_text(std::string_view s) {
  if (is_special_float(s)) return true;
  size_t i = 0, n = s.size();
  if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < n && is_digit(s[i])) ++i, ++digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
    size_t e = 0;
    while (i < n && is_digit(s[i])) ++i, ++e;
    if (e == 0) return false;
  }
  return i == n;
}

}  // namespace

std::optional<int64_t> parse_int(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    base = s[1] == 'x' ? 16 : 8;
    s.remove_prefix(2);
  }
  uint64_t u = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), u, base);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  if (neg) {
    if (u > uint64_t(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - u);
  }
  if (u > uint64_t(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(u);
}

std::optional<double> parse_float(std::string_view s) {
  if (is_special_float(s)) {
    bool neg = s[0] == '-';
    if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
    if (s[1] == 'n' || s[1] == 'N') return std::nan("");
    return neg ? -HUGE_VAL : HUGE_VAL;
  }
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d);
  if (r.ec == std::errc::result_out_of_range) {
    // from_chars reports overflow and underflow alike; tell them apart by the exponent sign.
    bool tiny = s.find("e-") != std::string_view::npos || s.find("E-") != std::string_view::npos;
    bool neg = !s.empty() && s[0] == '-';
    return tiny ? (neg ? -0.0 : 0.0) : (neg ? -HUGE_VAL : HUGE_VAL);
  }
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return d;
}

PlainKind classify_plain(std::string_view s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return PlainKind::Null;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") return PlainKind::Bool;
  if (is_int_text(s)) return parse_int(s) ? PlainKind::Int : PlainKind::IntOverflow;
  if (is_float_text(s)) return PlainKind::Float;
  return PlainKind::String;
}

ir::Value resolve_plain(std::string_view s) {
  switch (classify_plain(s)) {
    case PlainKind::Null: return ir::Value();
    case PlainKind::Bool: return ir::Value(s[0] == 't' || s[0] == 'T');
    case PlainKind::Int: return ir::Value(*parse_int(s));
    case PlainKind::IntOverflow:
    case PlainKind::Float: return ir::Value(parse_float(s).value_or(0.0));
    case PlainKind::String: break;
  }
  return ir::Value(std::string(s));
}

bool plain_safe(std::string_view s, bool flow) {
  if (s.empty() || s.size() > 200) return false;
  if (classify_plain(s) != PlainKind::String) return false;
  // Words that YAML 1.1 readers (PyYAML) take for booleans or null.
  static constexpr std::string_view k11[] = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
                                             "on", "On", "ON", "off", "Off", "OFF", "=", "<<"};
  for (auto w : k11)
    if (s == w) return false;
  // YAML 1.1 also reads 1_000 and 0b101 and 1:20 (sexagesimal) as numbers; quote anything that
  // starts like a number and is not a plain identifier.
  unsigned char c0 = static_cast<unsigned char>(s[0]);
  if (std::strchr("-?:,[]{}#&*!|>'\"%@` \t", c0)) {
    // "-x" and ":x" and "?x" are fine in YAML 1.2 block context but trip older readers.
    return false;
  }
  if (is_digit(s[0]) || s[0] == '.' || s[0] == '+') return false;
  if (s.back() == ' ' || s.back() == ':') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c >= 0x80) return false;  // control bytes; non-ASCII is quoted to stay portable
    if (c == '#' && s[i - 1] == ' ') return false;
    if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ' || flow)) return false;
    if (flow && std::strchr(",[]{}", c)) return false;
    if (c == '\'' || c == '"' || c == '\\') return false;
  }
  return true;
}

std::string format_float(double d, bool json) {
  if (std::isnan(d)) return json ? "NaN" : ".nan";
  if (std::isinf(d)) return json ? (d < 0 ? "-Infinity" : "Infinity") : (d < 0 ? "-.inf" : ".inf");
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eEn") == std::string::npos) {
    s += ".0";
  } else if (s.find('.') == std::string::npos) {
    size_t e = s.find_first_of("eE");
    if (e != std::string::npos) s.insert(e, ".0");
  }
  return s;
}

}  // namespace amanda::text
