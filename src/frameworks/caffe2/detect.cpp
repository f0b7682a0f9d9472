// Telling a NetDef from a TensorFlow GraphDef, which shares its extensions (.pb, .pbtxt), by the
// first bytes alone (docs/caffe2.md, "Which files are NetDefs"). Binary: a GraphDef opens with a
// NodeDef (field 1, whose bytes are a message), a NetDef with its name (field 1, text) or an op
// (field 2) whose input, output and type are text; an op with a type, or an external input or
// output, decides. Text: the field names at the top level (`op {`, `external_input:` against
// TensorFlow's `node {`, `versions {`, `library {`).
#include <cctype>

#include "../tensorflow/wire.h"  // the protobuf wire reader the TensorFlow framework wrote
#include "netdef.h"

namespace amanda::caffe2_frontend {

namespace wire = tf_frontend::detail::wire;

namespace {

bool printable(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

// `s` may be cut short by the end of the head: what is there must be OperatorDef fields.
bool operator_with_type(std::string_view s) {
  wire::Reader r(s);
  bool type = false;
  while (!r.done()) {
    uint32_t f, t;
    if (!r.tag(f, t)) return type;  // cut short
    if (f > 12) return false;
    bool len = f <= 8 || f == 10 || f == 11;
    if (len != (t == wire::kLen)) return false;
    if (t == wire::kLen) {
      std::string_view b;
      if (!r.bytes(b)) return type;  // cut short
      if ((f <= 4 || f == 7 || f == 8 || f == 11) && !printable(b)) return false;
      if (f == 4) type = !b.empty();
    } else if (!r.skip(t)) {
      return type;
    }
  }
  return type;
}

bool binary_netdef(std::string_view head) {
  wire::Reader r(head);
  bool decided = false;
  while (!r.done()) {
    uint32_t f, t;
    if (!r.tag(f, t)) return decided && r.e - r.p < 10;  // a tag cut by the end of the head
    if (f > 9) return false;
    bool len = f != 4;  // num_workers is the only varint
    if (len != (t == wire::kLen)) return false;
    if (t != wire::kLen) {
      if (!r.skip(t)) return decided;
      continue;
    }
    uint64_t n;
    if (!r.varint(n)) return decided;
    std::string_view b(reinterpret_cast<const char*>(r.p), std::min<uint64_t>(n, static_cast<uint64_t>(r.e - r.p)));
    bool cut = n > b.size();
    if (f == 1 || f == 3 || f == 7 || f == 8) {
      if (!printable(b)) return false;
      if (f == 7 || f == 8) decided = true;
    } else if (f == 2) {
      bool op = operator_with_type(b);
      if (!op && !cut) return false;
      decided |= op;
    }
    if (cut) return decided;
    r.p += n;
  }
  return decided;
}

bool text_netdef(std::string_view head) {
  int depth = 0;
  bool netdef = false;
  size_t i = 0;
  while (i < head.size()) {
    char c = head[i];
    if (c == '#') {
      while (i < head.size() && head[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      char q = c;
      for (++i; i < head.size() && head[i] != q; ++i)
        if (head[i] == '\\') ++i;
      ++i;
    } else if (c == '{' || c == '<') {
      ++depth;
      ++i;
    } else if (c == '}' || c == '>') {
      if (--depth < 0) return false;
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t s = i;
      while (i < head.size() && (std::isalnum(static_cast<unsigned char>(head[i])) || head[i] == '_')) ++i;
      std::string_view word = head.substr(s, i - s);
      if (depth == 0) {
        if (word == "node" || word == "versions" || word == "library") return false;
        if (word == "op" || word == "external_input" || word == "external_output" || word == "partition_info" ||
            word == "num_workers")
          netdef = true;
      }
    } else {
      ++i;
    }
  }
  return netdef;
}

}  // namespace

bool looks_like_netdef(std::string_view head, bool text) { return text ? text_netdef(head) : binary_netdef(head); }

}  // namespace amanda::caffe2_frontend
