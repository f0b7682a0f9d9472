// The report of a conversion as text (the tool's default) and as JSON (`--report json`).
#include <fmt/format.h>

#include "amanda/mapping/engine.h"

namespace amanda::mapping {

namespace {

std::string json_str(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) o += fmt::format("\\u{:04x}", int(c));
    else o += c;
  }
  return o + "\"";
}

}  // namespace

std::string Report::text() const {
  std::string s;
  for (const auto& t : tables) s += "table " + t + "\n";
  s += fmt::format("{} ops: {} converted by rules, {} unchanged\n", ops, mapped, passed);
  if (!unmapped.empty()) {
    size_t total = 0;
    for (const auto& u : unmapped) total += u.count;
    s += fmt::format("unmapped: {} ops of {} types have no rule\n", total, unmapped.size());
    for (const auto& u : unmapped) {
      s += fmt::format("  {:<24} x{:<5} ", u.type, u.count);
      for (size_t i = 0; i < u.names.size(); ++i) s += (i ? ", " : "") + u.names[i];
      s += u.count > u.names.size() ? ", ...\n" : "\n";
    }
  }
  if (!unsupported.empty()) {
    s += "cannot be converted:\n";
    for (const auto& u : unsupported) {
      s += fmt::format("  {:<24} x{:<5} {} (rule {})\n", u.type, u.count, u.reason, u.rule);
      s += "      at ";
      for (size_t i = 0; i < u.names.size(); ++i) s += (i ? ", " : "") + u.names[i];
      s += u.count > u.names.size() ? ", ...\n" : "\n";
    }
  }
  for (const auto& e : errors) s += "error: " + e + "\n";
  for (const auto& e : explain) s += e + "\n";
  return s;
}

std::string Report::json() const {
  auto counts = [](const std::vector<OpCount>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      const OpCount& c = v[i];
      s += fmt::format("{}{{\"type\": {}, \"count\": {}", i ? ", " : "", json_str(c.type), c.count);
      if (!c.rule.empty()) s += ", \"rule\": " + json_str(c.rule);
      if (!c.reason.empty()) s += ", \"reason\": " + json_str(c.reason);
      s += ", \"examples\": [";
      for (size_t k = 0; k < c.names.size(); ++k) s += (k ? ", " : "") + json_str(c.names[k]);
      s += "]}";
    }
    return s + "]";
  };
  std::string s = "{\"ok\": " + std::string(ok() ? "true" : "false") + ", \"tables\": [";
  for (size_t i = 0; i < tables.size(); ++i) s += (i ? ", " : "") + json_str(tables[i]);
  s += fmt::format("], \"ops\": {}, \"converted\": {}, \"unchanged\": {}, \"by_rule\": {{", ops, mapped, passed);
  bool first = true;
  for (const auto& [k, v] : by_rule) {
    s += fmt::format("{}{}: {}", first ? "" : ", ", json_str(k), v);
    first = false;
  }
  s += "}, \"unmapped\": " + counts(unmapped) + ", \"unsupported\": " + counts(unsupported) + ", \"errors\": [";
  for (size_t i = 0; i < errors.size(); ++i) s += (i ? ", " : "") + json_str(errors[i]);
  s += "], \"explain\": [";
  for (size_t i = 0; i < explain.size(); ++i) s += (i ? ", " : "") + json_str(explain[i]);
  return s + "]}\n";
}

}  // namespace amanda::mapping
