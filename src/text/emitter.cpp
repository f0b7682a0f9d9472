#include "emitter.h"

#include <vector>

#include <fmt/format.h>

#include "amanda/support/diagnostics.h"
#include "scalars.h"

namespace amanda::text {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length and code point of the UTF-8 sequence at s[i]; 0 when it is not valid UTF-8 (bad lead
// or continuation byte, overlong form, surrogate, beyond U+10FFFF).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (n == 0 || c >= 0xf8 || i + n > s.size()) return 0;
  cp = c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Code points that a YAML reader does not accept raw in a quoted scalar (C1 controls, the
// byte-order mark, non-characters) or reads as line breaks (NEL, LS, PS): they are escaped.
bool needs_escape(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

void hex_escape(std::string& o, uint32_t cp, bool json) {
  if (!json && cp <= 0xff) {
    o.append("\\x");
    o.push_back(kHex[cp >> 4]);
    o.push_back(kHex[cp & 15]);
    return;
  }
  o.append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) o.push_back(kHex[(cp >> shift) & 15]);
}

// A double-quoted scalar (YAML) or string (JSON). Text that is not valid UTF-8 cannot be written
// in either form and read back unchanged, so it is refused rather than written unreadable.
void quote_into(std::string& o, std::string_view s, bool json) {
  o.push_back('"');
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      uint32_t cp = 0;
      size_t n = utf8_sequence(s, i, cp);
      if (n == 0)
        throw Error(fmt::format("cannot write a string that is not valid UTF-8 (byte 0x{:02x} at offset {})", c, i));
      if (needs_escape(cp)) {
        o.append(s.data() + run, i - run);
        hex_escape(o, cp, json);
        run = i + n;
      }
      i += n - 1;
      continue;
    }
    const char* esc = nullptr;
    switch (c) {
      case '"': esc = "\\\""; break;
      case '\\': esc = "\\\\"; break;
      case '\n': esc = "\\n"; break;
      case '\t': esc = "\\t"; break;
      case '\r': esc = "\\r"; break;
      default: break;
    }
    if (!esc && c >= 0x20 && c != 0x7f) continue;
    o.append(s.data() + run, i - run);
    run = i + 1;
    if (esc)
      o.append(esc);
    else
      hex_escape(o, c, json);
  }
  o.append(s.data() + run, s.size() - run);
  o.push_back('"');
}

class YamlEmitter final : public Emitter {
 public:
  YamlEmitter(std::string& out, uint32_t max_depth) : o_(out), max_depth_(max_depth) {}

  void begin_map(bool flow, std::string_view tag) override { open(true, flow, tag); }
  void begin_seq(bool flow) override { open(false, flow, {}); }
  void end_map() override { close('{', '}'); }
  void end_seq() override { close('[', ']'); }

  void key(std::string_view k) override {
    Ctx& c = stack_.back();
    if (c.flow) {
      if (c.count) o_.append(", ");
    } else if (!(c.count == 0 && c.inline_first)) {
      newline(c.indent);
    }
    ++c.count;
    size_t start = o_.size();
    scalar_text(k, c.flow);
    if (o_.size() - start > kMaxImplicitKey) {
      // YAML limits implicit keys to 1024 characters; a longer one is written as an explicit
      // key: "? KEY" then ": VALUE" (on the next line in block style).
      o_.insert(start, "? ");
      if (c.flow) {
        o_.append(" :");
      } else {
        newline(c.indent);
        o_.push_back(':');
      }
    } else {
      o_.push_back(':');
    }
    after_key_ = true;
  }
  void str(std::string_view s) override {
    value_prefix();
    scalar_text(s, in_flow());
  }
  void raw_str(std::string_view s) override {
    value_prefix();
    o_.append(s);
  }
  void integer(int64_t v) override {
    value_prefix();
    fmt::format_to(std::back_inserter(o_), "{}", v);
  }
  void real(double v) override {
    value_prefix();
    o_.append(format_float(v, false));
  }
  void boolean(bool b) override {
    value_prefix();
    o_.append(b ? "true" : "false");
  }
  void null() override {
    value_prefix();
    o_.append("null");
  }
  std::string& buffer() override { return o_; }

 private:
  struct Ctx {
    bool map;
    bool flow;
    bool inline_first;  // first entry goes on the current line (after "- ")
    bool after_key;     // opened as the value of a key
    uint32_t indent;
    uint32_t count;
  };

  bool in_flow() const { return !stack_.empty() && stack_.back().flow; }

  void newline(uint32_t indent) {
    o_.push_back('\n');
    o_.append(indent, ' ');
  }

  // Before a scalar or a flow collection: after a key, a space; in a block sequence, "- ".
  void value_prefix() {
    if (stack_.empty()) return;
    Ctx& c = stack_.back();
    if (after_key_) {
      o_.push_back(' ');
      after_key_ = false;
      return;
    }
    if (c.map) return;  // not reached: a map value always follows a key
    if (c.flow) {
      if (c.count) o_.append(", ");
    } else {
      if (!(c.count == 0 && c.inline_first)) newline(c.indent);
      o_.append("- ");
    }
    ++c.count;
  }

  void open(bool map, bool flow, std::string_view tag) {
    if (stack_.size() >= max_depth_)
      throw Error("the document nests deeper than " + std::to_string(max_depth_) + " levels and cannot be written");
    if (in_flow()) flow = true;
    Ctx n{map, flow, false, false, 0, 0};
    if (stack_.empty()) {
      stack_.push_back(n);
      if (!tag.empty()) o_.append(tag).push_back(' ');
      if (flow) o_.push_back(map ? '{' : '[');
      else n.inline_first = true, stack_.back().inline_first = true;
      return;
    }
    Ctx& parent = stack_.back();
    bool was_after_key = after_key_;
    if (flow) {
      value_prefix();
      if (!tag.empty()) o_.append(tag).push_back(' ');
      o_.push_back(map ? '{' : '[');
      stack_.push_back(n);
      return;
    }
    if (was_after_key) {
      after_key_ = false;
      if (!tag.empty()) o_.append(" ").append(tag);
      n.after_key = true;
      n.indent = parent.indent + 2;
      n.inline_first = false;
      // YAML allows a block sequence at the key's own indentation, but the seed indents it.
    } else {
      // an item of a block sequence
      if (!(parent.count == 0 && parent.inline_first)) newline(parent.indent);
      o_.append("- ");
      ++parent.count;
      n.indent = parent.indent + 2;
      if (!tag.empty()) {
        o_.append(tag);
        n.inline_first = false;
      } else {
        n.inline_first = true;
      }
    }
    stack_.push_back(n);
  }

  void close(char open_ch, char close_ch) {
    Ctx c = stack_.back();
    stack_.pop_back();
    if (c.flow) {
      o_.push_back(close_ch);
      if (stack_.empty()) o_.push_back('\n');
      return;
    }
    if (c.count == 0) {
      // An empty block collection is written in flow form.
      if (c.after_key) o_.push_back(' ');
      o_.push_back(open_ch);
      o_.push_back(close_ch);
    }
    if (stack_.empty()) o_.push_back('\n');
  }

  void scalar_text(std::string_view s, bool flow) {
    if (plain_safe(s, flow))
      o_.append(s);
    else
      quote_into(o_, s, false);
  }

  static constexpr size_t kMaxImplicitKey = 1000;  // bytes, so at most 1000 characters

  std::string& o_;
  uint32_t max_depth_;
  std::vector<Ctx> stack_;
  bool after_key_ = false;
};

class JsonEmitter final : public Emitter {
 public:
  JsonEmitter(std::string& out, uint32_t max_depth) : o_(out), max_depth_(max_depth) {}

  void begin_map(bool flow, std::string_view tag) override {
    if (!tag.empty()) {
      open('{', flow, true);
      std::string k = "$";
      k.append(tag.substr(1));
      key(k);
      open('{', flow, false);
      return;
    }
    open('{', flow, false);
  }
  void begin_seq(bool flow) override { open('[', flow, false); }
  void end_map() override {
    bool wrapped = stack_.back().wrapped_inner;
    close('}');
    if (wrapped) close('}');
  }
  void end_seq() override { close(']'); }
  void key(std::string_view k) override {
    item_prefix();
    quote_into(o_, k, true);
    o_.append(": ");
    after_key_ = true;
  }
  void str(std::string_view s) override {
    item_prefix();
    quote_into(o_, s, true);
  }
  void raw_str(std::string_view s) override {
    item_prefix();
    o_.push_back('"');
    o_.append(s);
    o_.push_back('"');
  }
  void integer(int64_t v) override {
    item_prefix();
    fmt::format_to(std::back_inserter(o_), "{}", v);
  }
  void real(double v) override {
    item_prefix();
    o_.append(format_float(v, true));
  }
  void boolean(bool b) override {
    item_prefix();
    o_.append(b ? "true" : "false");
  }
  void null() override {
    item_prefix();
    o_.append("null");
  }
  std::string& buffer() override { return o_; }

 private:
  struct Ctx {
    char close;
    bool flow;
    bool wrapped_inner;  // the inner object of a {"$tag": {...}} pair
    uint32_t count;
    bool wrapper_pending = false;  // the outer object of such a pair, before its inner one opens
  };

  void item_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (stack_.empty()) return;
    Ctx& c = stack_.back();
    if (c.count++) o_.push_back(',');
    if (c.flow) {
      if (c.count > 1) o_.push_back(' ');
    } else {
      o_.push_back('\n');
      o_.append(stack_.size() * 2, ' ');
    }
  }

  void open(char ch, bool flow, bool outer_of_wrapper) {
    if (stack_.size() >= max_depth_)
      throw Error("the document nests deeper than " + std::to_string(max_depth_) + " levels and cannot be written");
    item_prefix();
    bool parent_flow = !stack_.empty() && stack_.back().flow;
    bool wrapped_inner = !stack_.empty() && stack_.back().wrapper_pending;
    if (!stack_.empty()) stack_.back().wrapper_pending = false;
    o_.push_back(ch);
    stack_.push_back({ch == '{' ? '}' : ']', flow || parent_flow, wrapped_inner, 0, false});
    stack_.back().wrapper_pending = outer_of_wrapper;
  }

  void close(char ch) {
    Ctx c = stack_.back();
    stack_.pop_back();
    if (!c.flow && c.count) {
      o_.push_back('\n');
      o_.append(stack_.size() * 2, ' ');
    }
    o_.push_back(ch);
    if (stack_.empty()) o_.push_back('\n');
  }

  std::string& o_;
  uint32_t max_depth_;
  std::vector<Ctx> stack_;
  bool after_key_ = false;
};

}  // namespace

std::unique_ptr<Emitter> make_yaml_emitter(std::string& out, uint32_t max_depth) {
  return std::make_unique<YamlEmitter>(out, max_depth);
}
std::unique_ptr<Emitter> make_json_emitter(std::string& out, uint32_t max_depth) {
  return std::make_unique<JsonEmitter>(out, max_depth);
}

}  // namespace amanda::text
