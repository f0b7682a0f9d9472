// The line form the compact namespace files share: the PyTorch namespace's .ops
// (src/frameworks/torchscript/namespace_file.cpp) and the TensorFlow namespaces' .tfops
// (src/frameworks/tensorflow/namespace_file.cpp), both read in milliseconds where the seed-format
// JSON of the same namespace takes tens:
//
//   MAGIC                                 first line: the format and its version
//   namespace<TAB>NAME<TAB>TYPE_SYSTEM
//   op<TAB>TYPE[<TAB>...]                 an op; the lines below belong to it
//   TAG<TAB>...                           the op's attributes and ports, as the format says
//
// Lines end with '\n'; empty lines and lines starting with '#' are skipped; fields are split at
// tabs. A format says what its op and member lines hold by overriding the hooks below; the reader
// does the rest (the namespace line, op order and duplicates) and reports errors as path:line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/schema/schema.h"

namespace amanda::schema {

class CompactReader {
 public:
  CompactReader(std::string_view text, const std::string& path) : text_(text), path_(path) {}
  virtual ~CompactReader() = default;
  // The namespace the text holds (not compiled against a type system yet).
  std::unique_ptr<NamespaceSchema> run();

 protected:
  [[noreturn]] void fail(const std::string& msg) const;
  // Splits `s` at tabs into at most `n` fields; returns how many there are (more than n: n + 1).
  static size_t split(std::string_view s, std::string_view* f, size_t n);

  virtual std::string_view magic() const = 0;
  virtual std::string_view file_kind() const = 0;  // "a .tfops": "not a .tfops namespace file"
  virtual size_t max_fields() const = 0;           // the most fields a line has (at most 16)
  virtual size_t op_fields() const = 0;            // the fields of an op line
  virtual std::string_view op_usage() const = 0;   // its form, for errors: "op<TAB>TYPE"
  virtual void begin(NamespaceSchema&) {}          // before the first line (to reserve)
  // After an op line made `op` (its type set); `rest`: the text after the line.
  virtual void on_op(OpSchema& op, const std::string_view* f, std::string_view rest) {}
  // A line of `op` other than an op line; false for a tag the format does not have.
  virtual bool member(std::string_view tag, const std::string_view* f, size_t n, OpSchema& op) = 0;

  std::string_view text_;
  const std::string& path_;
  uint32_t line_ = 0;
};

}  // namespace amanda::schema
