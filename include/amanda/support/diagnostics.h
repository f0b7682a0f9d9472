// Diagnostics: every problem names a place (file:line:column or an entity path) and says what
// was expected. Parsers throw ParseError for the first fatal problem; checks that can go on
// collect every problem into a Diagnostics list.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace amanda {

struct SourceLoc {
  std::string file;
  uint32_t line = 0;    // 1-based; 0 = unknown
  uint32_t column = 0;  // 1-based; 0 = unknown
  std::string str() const;  // "file:line:column" (parts that are unknown are left out)
};

enum class Severity { Note, Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string where;  // "file:line:col" or an entity path such as "h/f:input x"
  std::string message;
  std::string str() const;  // "where: error: message"
};

class Diagnostics {
 public:
  void error(std::string where, std::string message);
  void warning(std::string where, std::string message);
  void note(std::string where, std::string message);
  void add(Diagnostic d) { items_.push_back(std::move(d)); }

  const std::vector<Diagnostic>& items() const { return items_; }
  size_t error_count() const;
  size_t warning_count() const;
  bool has_errors() const { return error_count() != 0; }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }
  std::string str() const;  // one line per diagnostic

 private:
  std::vector<Diagnostic> items_;
};

// A fatal input error at a known place.
class ParseError : public std::runtime_error {
 public:
  ParseError(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// An error that is not tied to an input position (I/O failures, API misuse).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A wrong option value (the tool exits with 2, usage, rather than 1, invalid input).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace amanda
