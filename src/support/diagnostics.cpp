#include "amanda/support/diagnostics.h"

#include <algorithm>

namespace amanda {

std::string SourceLoc::str() const {
  std::string s = file;
  if (line) {
    s += ':' + std::to_string(line);
    if (column) s += ':' + std::to_string(column);
  }
  return s;
}

std::string Diagnostic::str() const {
  const char* sev = severity == Severity::Error ? "error" : severity == Severity::Warning ? "warning" : "note";
  if (where.empty()) return std::string(sev) + ": " + message;
  return where + ": " + sev + ": " + message;
}

void Diagnostics::error(std::string where, std::string message) {
  items_.push_back({Severity::Error, std::move(where), std::move(message)});
}
void Diagnostics::warning(std::string where, std::string message) {
  items_.push_back({Severity::Warning, std::move(where), std::move(message)});
}
void Diagnostics::note(std::string where, std::string message) {
  items_.push_back({Severity::Note, std::move(where), std::move(message)});
}

size_t Diagnostics::error_count() const {
  return std::count_if(items_.begin(), items_.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; });
}
size_t Diagnostics::warning_count() const {
  return std::count_if(items_.begin(), items_.end(), [](const Diagnostic& d) { return d.severity == Severity::Warning; });
}

std::string Diagnostics::str() const {
  std::string s;
  for (const auto& d : items_) s += d.str() + '\n';
  return s;
}

ParseError::ParseError(SourceLoc loc, const std::string& message)
    : std::runtime_error(loc.str() + ": error: " + message), loc_(std::move(loc)), message_(message) {}

}  // namespace amanda
