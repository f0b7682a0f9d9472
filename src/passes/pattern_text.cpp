// The text form of matcher patterns: see amanda/passes/pattern_text.h.
#include "amanda/passes/pattern_text.h"

#include <cctype>
#include <charconv>
#include <cstdint>

#include "amanda/ir/tensor.h"
#include "amanda/support/diagnostics.h"

namespace amanda::passes {

namespace {

constexpr size_t kMaxText = 1 << 20;  // a pattern is a few lines; a megabyte is not one
constexpr int kMaxDepth = 200;         // nesting of nodes and lists

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  TextPattern run() {
    if (s_.size() > kMaxText) fail("pattern text of " + std::to_string(s_.size()) + " bytes (at most " + std::to_string(kMaxText) + ")");
    TextPattern out;
    bool any = false;
    while (true) {
      skip_blank_lines();
      if (at_end()) break;
      // `NAME = expr` or a bare expr (the root when it is the last line)
      size_t save = i_;
      uint32_t sl = line_, sc = col();
      std::string name;
      if (ident_start(peek())) {
        name = ident();
        skip_spaces();
        if (peek() == '=' ) {
          ++i_;
        } else {
          i_ = save;  // not a binding: the line is the node itself (no newline was crossed)
          name.clear();
        }
      }
      if (!name.empty() && (name == "any" || name == "const" || name == "input"))
        fail_at(sl, sc, "'" + name + "' is a keyword, not a name to bind");
      if (!name.empty() && names_.count(name)) fail_at(sl, sc, "'" + name + "' is bound twice");
      skip_spaces();
      Pat p = expr(0);
      skip_spaces();
      if (!at_end() && peek() != '\n' && peek() != '#') fail("unexpected '" + std::string(1, peek()) + "' after the node");
      skip_comment();
      if (!name.empty()) {
        p.as(name);
        names_.emplace(name, p);
      }
      out.root = p;
      any = true;
    }
    if (!any) fail("empty pattern");
    out.names = names_;
    return out;
  }

 private:
  std::string_view s_;
  const std::string& file_;
  size_t i_ = 0, line_start_ = 0;
  uint32_t line_ = 1;
  std::map<std::string, Pat, std::less<>> names_;

  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }
  uint32_t col() const { return static_cast<uint32_t>(i_ - line_start_ + 1); }
  [[noreturn]] void fail(const std::string& m) const { fail_at(line_, col(), m); }
  [[noreturn]] void fail_at(uint32_t line, uint32_t col, const std::string& m) const {
    throw ParseError(SourceLoc{file_, line, col}, m);
  }
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':'; }

  void skip_spaces() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\r')) ++i_;
  }
  void skip_comment() {
    if (peek() == '#')
      while (!at_end() && peek() != '\n') ++i_;
  }
  void newline() {
    ++i_;
    ++line_;
    line_start_ = i_;
  }
  void skip_blank_lines() {
    while (true) {
      skip_spaces();
      skip_comment();
      if (peek() == '\n') newline();
      else return;
    }
  }
  // Inside brackets a node may continue on the next line.
  void skip_ws() {
    while (true) {
      skip_spaces();
      skip_comment();
      if (peek() == '\n') newline();
      else return;
    }
  }
  std::string ident() {
    size_t b = i_;
    while (!at_end() && ident_char(peek())) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  void expect(char c, const char* what) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "' " + what + (at_end() ? ", found the end" : ", found '" + std::string(1, peek()) + "'"));
    ++i_;
  }
  int64_t integer() {
    skip_spaces();
    size_t b = i_;
    if (peek() == '-') ++i_;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s_.data() + b, s_.data() + i_, v);
    if (ec != std::errc() || p != s_.data() + i_) {
      i_ = b;
      fail("expected an integer");
    }
    return v;
  }

  Pat expr(int depth) {
    if (depth > kMaxDepth) fail("nodes nested deeper than " + std::to_string(kMaxDepth));
    skip_ws();
    uint32_t l = line_, c = col();
    if (!ident_start(peek())) fail(at_end() ? "expected a node, found the end" : "expected a node, found '" + std::string(1, peek()) + "'");
    std::string types = ident();
    while (peek() == '|') {
      ++i_;
      if (!ident_start(peek())) fail("expected an op type after '|'");
      types += "|" + ident();
    }
    skip_spaces();
    Pat p;
    if (peek() == '(') {
      ++i_;
      p = op(types);
      skip_ws();
      if (peek() != ')') {
        while (true) {
          Pat a = expr(depth + 1);
          skip_spaces();
          if (peek() == '?') {
            ++i_;
            p.opt(a);
          } else if (peek() == '*') {
            ++i_;
            p.star(a);
          } else {
            p.in(a);
          }
          skip_ws();
          if (peek() == ',') {
            ++i_;
            continue;
          }
          break;
        }
      }
      expect(')', "to close the inputs");
    } else if (types == "any") {
      p = any();
    } else if (types == "const") {
      p = constant();
    } else if (types == "input") {
      p = scope_input();
    } else if (auto it = names_.find(types); it != names_.end()) {
      p = it->second;
    } else if (types.find('|') != std::string::npos) {
      fail_at(l, c, "op types '" + types + "' without '(' inputs ')'");
    } else {
      fail_at(l, c, "'" + types + "' is not bound (a name is bound by an earlier line 'NAME = ...'), nor any, const, input or TYPE(...)");
    }
    if (depth > 0) skip_ws();  // inside brackets a node's predicates may be on the next line
    else skip_spaces();
    if (peek() == '[') {
      ++i_;
      predicates(p, depth);
    }
    return p;
  }

  void predicates(Pat& p, int depth) {
    skip_ws();
    if (peek() == ']') {
      ++i_;
      return;
    }
    while (true) {
      skip_ws();
      uint32_t l = line_, c = col();
      bool negate = false;
      if (peek() == '!') {
        negate = true;
        ++i_;
      }
      if (!ident_start(peek())) fail("expected a predicate (uses=N, rank=N, dtype=T, ATTR=VALUE, !ATTR, ...)");
      std::string key = ident();
      skip_spaces();
      if (negate) {
        p.no_attr(key);
      } else if (peek() != '=') {
        if (key == "static_shape") p.static_shape();
        else if (key == "not_output") p.not_scope_output();
        else if (key == "exact") p.exact();
        else if (key == "boundary") p.boundary();
        else fail_at(l, c, "unknown predicate '" + key + "' (a flag is static_shape, not_output, exact or boundary; else KEY=VALUE)");
      } else {
        ++i_;
        skip_spaces();
        if (key == "uses" || key == "max_uses" || key == "rank" || key == "output") {
          int64_t n = integer();
          if (key != "output" && n < 0) fail_at(l, c, key + " must not be negative");
          if (key == "uses") p.uses(static_cast<size_t>(n));
          else if (key == "max_uses") p.max_uses(static_cast<size_t>(n));
          else if (key == "rank") p.rank(n);
          else p.output(static_cast<int>(std::max<int64_t>(-1, std::min<int64_t>(n, 1 << 20))));
        } else if (key == "dtype") {
          std::string t = ident();
          auto d = ir::dtype_from_name(t);
          if (!d) fail_at(l, c, "unknown element type '" + t + "'");
          p.dtype(*d);
        } else if (key == "label") {
          if (!ident_start(peek())) fail("expected a label");
          p.as(ident());
        } else {
          ir::Value v = value(depth + 1);
          skip_spaces();
          if (s_.substr(i_).starts_with("default") && (i_ + 7 >= s_.size() || !ident_char(s_[i_ + 7]))) {
            i_ += 7;
            skip_spaces();
            p.attr_or(key, std::move(v), value(depth + 1));
          } else {
            p.attr(key, std::move(v));
          }
        }
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect(']', "to close the predicates");
      return;
    }
  }

  ir::Value value(int depth) {
    if (depth > kMaxDepth) fail("lists nested deeper than " + std::to_string(kMaxDepth));
    skip_spaces();
    char c = peek();
    if (c == '[') {
      ++i_;
      ir::Value::List l;
      skip_ws();
      if (peek() == ']') {
        ++i_;
        return ir::Value(std::move(l));
      }
      while (true) {
        l.push_back(value(depth + 1));
        skip_ws();
        if (peek() == ',') {
          ++i_;
          skip_ws();
          continue;
        }
        expect(']', "to close the list");
        return ir::Value(std::move(l));
      }
    }
    if (c == '\'' || c == '"') {
      ++i_;
      size_t b = i_;
      while (!at_end() && peek() != c && peek() != '\n') ++i_;
      if (peek() != c) fail("unterminated string");
      std::string str(s_.substr(b, i_ - b));
      ++i_;
      return ir::Value(std::move(str));
    }
    size_t b = i_;
    if (c == '-' || c == '+') ++i_;
    bool is_float = false;
    while (!at_end()) {
      char d = peek();
      if (std::isdigit(static_cast<unsigned char>(d))) ++i_;
      else if (d == '.' || d == 'e' || d == 'E' || ((d == '-' || d == '+') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))) {
        is_float = true;
        ++i_;
      } else break;
    }
    std::string_view num = s_.substr(b, i_ - b);
    if (num.empty() || num == "-" || num == "+") {
      i_ = b;
      fail("expected a value (an integer, a float, a 'string' or a [list])");
    }
    if (!is_float) {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(num.data() + (num[0] == '+'), num.data() + num.size(), v);
      if (ec == std::errc() && p == num.data() + num.size()) return ir::Value(v);
      i_ = b;
      fail("integer '" + std::string(num) + "' out of range");
    }
    double v = 0;
    auto [p, ec] = std::from_chars(num.data() + (num[0] == '+'), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size()) {
      i_ = b;
      fail("malformed number '" + std::string(num) + "'");
    }
    return ir::Value(v);
  }
};

}  // namespace

TextPattern parse_pattern(std::string_view text, const std::string& file) { return Parser(text, file).run(); }

}  // namespace amanda::passes
