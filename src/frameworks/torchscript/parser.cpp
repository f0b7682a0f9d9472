// Parser for TorchScript's serialized Python (the code/ files of a torch.jit.save archive).
//
// A lazy lexer (Python's rules: indentation tokens, implicit line joining inside brackets,
// comments, backslash continuation) feeds a recursive-descent parser with Python's operator
// precedence. Two limits keep every input safe: the recursion depth (nested brackets, unary
// chains, blocks) and the height of every expression tree built (left-associative chains such
// as a + b + c ... are loops in the parser but grow the tree), both bounded by
// ParseLimits::max_depth, so that neither the parser nor the recursive destruction and printing
// of the tree can exhaust the stack.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "amanda/support/diagnostics.h"
#include "frameworks/torchscript/ast.h"

namespace amanda::torchscript {
namespace {

enum class Tok : uint8_t { End, Newline, Indent, Dedent, Name, Keyword, Int, Float, Str, Op };

struct Token {
  Tok kind = Tok::End;
  std::string_view text;  // the token's source text (empty for End, Indent, Dedent)
  Pos pos;
  uint64_t ival = 0;  // Int: the magnitude (at most 2^63, which only `-` may precede)
  double fval = 0;    // Float
  std::string sval;   // Str: the decoded value
  uint64_t code = 0;  // Op and Keyword: pack(text), for cheap comparisons
};

// Up to 8 characters in one integer (every operator and keyword fits). Always inlined, so that
// pack("==") in the parser's comparisons folds to a constant.
[[gnu::always_inline]] constexpr uint64_t pack(std::string_view s) {
  uint64_t code = 0;
  for (size_t k = 0; k < s.size() && k < 8; ++k) code |= uint64_t{static_cast<unsigned char>(s[k])} << (8 * k);
  return code;
}

bool is_keyword(std::string_view s) {
  if (s.size() > 8) return false;
  switch (pack(s)) {
    case pack("False"): case pack("None"): case pack("True"): case pack("and"): case pack("assert"):
    case pack("break"): case pack("class"): case pack("continue"): case pack("def"): case pack("del"):
    case pack("elif"): case pack("else"): case pack("for"): case pack("from"): case pack("if"):
    case pack("import"): case pack("in"): case pack("is"): case pack("not"): case pack("or"):
    case pack("pass"): case pack("raise"): case pack("return"): case pack("while"):
      return true;
    default:
      return false;
  }
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& path) : src_(src), path_(path) {}

  Token next() {
    Token t = lex();
    last_ = t.kind;
    return t;
  }

  [[noreturn]] void fail(uint32_t line, uint32_t column, const std::string& msg) const {
    throw ParseError(SourceLoc{path_, line, column}, msg);
  }

 private:
  uint32_t column_at(size_t p) const { return static_cast<uint32_t>(p - line_start_ + 1); }
  char at(size_t p) const { return p < src_.size() ? src_[p] : '\0'; }

  Token make(Tok kind, size_t start, size_t end) const {
    Token t;
    t.kind = kind;
    t.text = src_.substr(start, end - start);
    t.pos = Pos{line_, column_at(start)};
    return t;
  }

  void new_line(size_t next_line_start) {
    ++line_;
    line_start_ = next_line_start;
  }

  Token lex() {
    if (pending_dedents_ > 0) {
      --pending_dedents_;
      return make(Tok::Dedent, pos_, pos_);
    }
    for (;;) {
      if (at_line_start_ && nesting_ == 0) {
        // Indentation of a new logical line; blank and comment-only lines do not count.
        size_t p = pos_;
        while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\r')) ++p;
        if (p < src_.size() && src_[p] == '\t') fail(line_, column_at(p), "tab in indentation (only spaces are allowed)");
        if (p < src_.size() && src_[p] == '#') {
          while (p < src_.size() && src_[p] != '\n') ++p;
        }
        if (p < src_.size() && src_[p] == '\n') {
          pos_ = p + 1;
          new_line(pos_);
          continue;
        }
        pos_ = p;
        if (p >= src_.size()) return end_of_file();
        at_line_start_ = false;
        const size_t width = p - line_start_;
        if (width > indents_.back()) {
          indents_.push_back(width);
          return make(Tok::Indent, p, p);
        }
        if (width < indents_.back()) {
          uint32_t pops = 0;
          while (width < indents_.back()) {
            indents_.pop_back();
            ++pops;
          }
          if (width != indents_.back())
            fail(line_, column_at(p), "inconsistent dedent: indentation matches no enclosing block");
          pending_dedents_ = pops - 1;
          return make(Tok::Dedent, p, p);
        }
      }
      if (pos_ >= src_.size()) return end_of_file();
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
        continue;
      }
      if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\\') {  // explicit line joining
        size_t p = pos_ + 1;
        if (at(p) == '\r') ++p;
        if (at(p) != '\n') fail(line_, column_at(pos_), "expected a newline after '\\' (line continuation)");
        pos_ = p + 1;
        new_line(pos_);
        continue;
      }
      if (c == '\n') {
        const size_t start = pos_++;
        Token t = make(Tok::Newline, start, start + 1);
        new_line(pos_);
        if (nesting_ > 0) continue;  // implicit line joining inside brackets
        at_line_start_ = true;
        return t;
      }
      if (is_ident_start(c)) {
        size_t p = pos_ + 1;
        while (p < src_.size() && is_ident_char(src_[p])) ++p;
        Token t = make(Tok::Name, pos_, p);
        if (is_keyword(t.text)) {
          t.kind = Tok::Keyword;
          t.code = pack(t.text);
        }
        pos_ = p;
        return t;
      }
      if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) return number();
      if (c == '"' || c == '\'') return string();
      return op();
    }
  }

  Token end_of_file() {
    // The last logical line ends with a NEWLINE, then every open block closes.
    const bool line_open = last_ != Tok::End && last_ != Tok::Newline && last_ != Tok::Indent && last_ != Tok::Dedent;
    if (nesting_ == 0 && line_open) return make(Tok::Newline, pos_, pos_);
    if (nesting_ == 0 && indents_.size() > 1) {
      indents_.pop_back();
      return make(Tok::Dedent, pos_, pos_);
    }
    return make(Tok::End, pos_, pos_);
  }

  Token number() {
    const size_t start = pos_;
    size_t p = pos_;
    const char c1 = at(p + 1) | 0x20;
    if (src_[p] == '0' && (c1 == 'x' || c1 == 'o' || c1 == 'b')) {
      const int base = c1 == 'x' ? 16 : c1 == 'o' ? 8 : 2;
      p += 2;
      uint64_t v = 0;
      const size_t digits = p;
      bool overflow = false;
      while (p < src_.size() && digit_value(src_[p]) < base) {
        const uint64_t d = static_cast<uint64_t>(digit_value(src_[p]));
        if (v > (std::numeric_limits<uint64_t>::max() - d) / static_cast<uint64_t>(base)) overflow = true;
        v = v * static_cast<uint64_t>(base) + d;
        ++p;
      }
      if (p == digits) fail(line_, column_at(start), "expected digits after the base prefix of an integer literal");
      return finish_int(start, p, v, overflow);
    }
    while (is_digit(at(p))) ++p;
    bool is_float = false;
    if (at(p) == '.') {
      is_float = true;
      ++p;
      while (is_digit(at(p))) ++p;
    }
    if ((at(p) | 0x20) == 'e') {
      size_t q = p + 1;
      if (at(q) == '+' || at(q) == '-') ++q;
      if (!is_digit(at(q))) fail(line_, column_at(p), "expected digits in the exponent of a float literal");
      while (is_digit(at(q))) ++q;
      p = q;
      is_float = true;
    }
    if (is_ident_char(at(p)) || at(p) == '.')
      fail(line_, column_at(p), "invalid character in number literal");
    if (is_float) {
      Token t = make(Tok::Float, start, p);
      const auto r = std::from_chars(src_.data() + start, src_.data() + p, t.fval);
      if (r.ec != std::errc() || r.ptr != src_.data() + p)
        fail(line_, column_at(start), "float literal out of range");
      pos_ = p;
      return t;
    }
    uint64_t v = 0;
    bool overflow = false;
    for (size_t q = start; q < p; ++q) {
      const uint64_t d = static_cast<uint64_t>(src_[q] - '0');
      if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
      v = v * 10 + d;
    }
    return finish_int(start, p, v, overflow);
  }

  Token finish_int(size_t start, size_t end, uint64_t v, bool overflow) {
    if (is_ident_char(at(end))) fail(line_, column_at(end), "invalid character in number literal");
    // 2^63 passes (only as the operand of unary minus: -9223372036854775808).
    if (overflow || v > (uint64_t{1} << 63)) fail(line_, column_at(start), "integer literal out of the int64 range");
    Token t = make(Tok::Int, start, end);
    t.ival = v;
    pos_ = end;
    return t;
  }

  Token string() {
    const size_t start = pos_;
    const uint32_t line = line_, column = column_at(start);
    const char quote = src_[pos_];
    std::string value;
    size_t p = pos_ + 1;
    for (;;) {
      // Copy the run of plain characters at once.
      size_t run = p;
      while (run < src_.size() && src_[run] != quote && src_[run] != '\\' && src_[run] != '\n') ++run;
      value.append(src_.data() + p, run - p);
      p = run;
      if (p >= src_.size() || src_[p] == '\n') fail(line, column, "unterminated string literal");
      if (src_[p] == quote) {
        ++p;
        break;
      }
      // A backslash escape.
      const size_t esc = p;
      const char e = at(p + 1);
      p += 2;
      switch (e) {
        case '\n': new_line(p); break;  // backslash-newline continues the string
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'v': value += '\v'; break;
        case 'x': case 'u': case 'U': {
          const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          uint32_t cp = 0;
          for (int k = 0; k < n; ++k, ++p) {
            const int d = digit_value(at(p));
            if (d >= 16) fail(line_, column_at(esc), std::string("expected ") + std::to_string(n) + " hex digits in '\\" + e + "' escape");
            cp = cp * 16 + static_cast<uint32_t>(d);
          }
          if (e == 'x') value += static_cast<char>(cp);
          else if (cp > 0x10FFFF) fail(line_, column_at(esc), "unicode escape beyond U+10FFFF");
          else append_utf8(value, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {  // up to three octal digits: the printer's form for unprintable bytes
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && at(p) >= '0' && at(p) <= '7'; ++k, ++p) v = v * 8 + static_cast<uint32_t>(at(p) - '0');
            if (v > 0377) fail(line_, column_at(esc), "octal escape beyond \\377");
            value += static_cast<char>(v);
          } else if (p > src_.size()) {
            fail(line, column, "unterminated string literal");
          } else {  // unknown escapes keep the backslash, as in Python
            value += '\\';
            p -= 1;
          }
      }
    }
    Token t = make(Tok::Str, start, p);
    t.pos = Pos{line, column};
    t.sval = std::move(value);
    pos_ = p;
    return t;
  }

  // Operators and delimiters: + - * / // % ** @ & | ^ ~ << >> < > <= >= == != -> = and the
  // augmented assignments (+= //= **= <<= ...), ( ) [ ] { } , : . ;
  Token op() {
    const char c = src_[pos_], c2 = at(pos_ + 1);
    size_t len = 1;
    switch (c) {
      case '*': case '/': case '<': case '>':
        if (c2 == c) len = at(pos_ + 2) == '=' ? 3 : 2;
        else if (c2 == '=') len = 2;
        break;
      case '+': case '%': case '@': case '&': case '|': case '^': case '=':
        if (c2 == '=') len = 2;
        break;
      case '-':
        if (c2 == '=' || c2 == '>') len = 2;
        break;
      case '!':
        if (c2 != '=') fail(line_, column_at(pos_), "unexpected character '!'");
        len = 2;
        break;
      case '(': case '[': case '{':
        ++nesting_;
        break;
      case ')': case ']': case '}':
        if (nesting_ > 0) --nesting_;
        break;
      case '~': case ',': case ':': case '.': case ';':
        break;
      default: {
        const unsigned char u = static_cast<unsigned char>(c);
        char buf[8];
        std::snprintf(buf, sizeof buf, u >= 0x20 && u < 0x7F ? "'%c'" : "0x%02X", u);
        fail(line_, column_at(pos_), std::string("unexpected character ") + buf);
      }
    }
    Token t = make(Tok::Op, pos_, pos_ + len);
    t.code = pack(t.text);
    pos_ += len;
    return t;
  }

  std::string_view src_;
  const std::string& path_;
  size_t pos_ = 0, line_start_ = 0;
  uint32_t line_ = 1;
  uint32_t nesting_ = 0;  // open brackets
  bool at_line_start_ = true;
  std::vector<size_t> indents_{0};
  uint32_t pending_dedents_ = 0;
  Tok last_ = Tok::End;
};

// An expression under construction and the height of its tree.
struct Node {
  ExprPtr e;
  uint32_t h = 0;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::End: return "end of file";
    case Tok::Newline: return "NEWLINE";
    case Tok::Indent: return "INDENT";
    case Tok::Dedent: return "DEDENT";
    case Tok::Str: return "string literal";
    default: return "'" + std::string(t.text) + "'";
  }
}

ExprPtr clone(const Expr& e) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind;
  c->pos = e.pos;
  c->text = e.text;
  c->i = e.i;
  c->f = e.f;
  for (const ExprPtr& a : e.args) c->args.push_back(a ? clone(*a) : nullptr);
  for (const auto& [k, v] : e.keywords) c->keywords.emplace_back(k, clone(*v));
  return c;
}

class Parser {
 public:
  Parser(std::string_view src, const std::string& path, const ParseLimits& limits)
      : src_(src), path_(path), limits_(limits), lex_(src, path) {}

  SourceFile parse_file() {
    SourceFile file;
    file.path = path_;
    while (peek().kind != Tok::End) {
      const Token& t = peek();
      if (t.kind == Tok::Indent) fail_at(t.pos, "unexpected indent");
      if (is_kw(t, "class")) {
        file.classes.push_back(parse_class());
      } else if (is_kw(t, "def")) {
        file.functions.push_back(parse_def());
      } else if (is_kw(t, "import") || is_kw(t, "from")) {
        file.imports.push_back(parse_import());
      } else {
        parse_statement(file.statements);
      }
    }
    return file;
  }

 private:
  // ---- tokens
  const Token& peek(size_t k = 0) {
    if (head_ + k < buf_.size()) return buf_[head_ + k];
    return lex_until(k);
  }
  // The slow path of peek, out of line so that the fast one stays small.
  [[gnu::noinline]] const Token& lex_until(size_t k) {
    while (buf_.size() - head_ <= k) buf_.push_back(lex_.next());
    return buf_[head_ + k];
  }

  Token take() {
    peek();
    Token t = std::move(buf_[head_++]);
    if (head_ == buf_.size()) {
      buf_.clear();
      head_ = 0;
    }
    if (!t.text.empty()) last_end_ = static_cast<size_t>(t.text.data() + t.text.size() - src_.data());
    return t;
  }

  static bool is_kw(const Token& t, std::string_view kw) { return t.kind == Tok::Keyword && t.code == pack(kw); }
  static bool is_op(const Token& t, std::string_view op) { return t.kind == Tok::Op && t.code == pack(op); }
  bool at_kw(std::string_view kw) { return is_kw(peek(), kw); }
  bool at_op(std::string_view op) { return is_op(peek(), op); }
  bool accept_op(std::string_view op) {
    if (!at_op(op)) return false;
    take();
    return true;
  }

  [[noreturn]] void fail_at(Pos p, const std::string& msg) const {
    throw ParseError(SourceLoc{path_, p.line, p.column}, msg);
  }
  // "expected <what>, found <the next token>"
  [[noreturn]] void expected(const std::string& what) {
    const Token& t = peek();
    fail_at(t.pos, "expected " + what + ", found " + describe(t));
  }
  Token expect_op(std::string_view op, const char* context) {
    if (!at_op(op)) expected("'" + std::string(op) + "' " + context);
    return take();
  }
  Token expect_name(const char* what) {
    if (peek().kind != Tok::Name) expected(what);
    return take();
  }
  void expect_newline(const char* context) {
    if (peek().kind != Tok::Newline) expected(std::string("NEWLINE ") + context);
    take();
  }

  // Recursion guard: every recursive path of the parser passes through one.
  struct Deeper {
    Parser& p;
    Deeper(Parser& parser, Pos at) : p(parser) {
      if (p.depth_ >= p.limits_.max_depth)
        p.fail_at(at, "nesting deeper than " + std::to_string(p.limits_.max_depth) + " levels");
      ++p.depth_;
    }
    ~Deeper() { --p.depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
  };

  // ---- expression nodes
  static Node leaf(Expr::Kind kind, Pos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return Node{std::move(e), 1};
  }
  // Raises n's height to h, within the limit.
  void grow(Node& n, uint32_t h) {
    n.h = h;
    if (h > limits_.max_depth)
      fail_at(n.e->pos, "expression nested deeper than " + std::to_string(limits_.max_depth) + " levels");
  }
  // Appends a child (which may be empty: a slice bound) and grows the height.
  void add(Node& parent, Node child) {
    if (child.h + 1 > parent.h) grow(parent, child.h + 1);
    parent.e->args.push_back(std::move(child.e));
  }
  Node node(Expr::Kind kind, Pos pos, std::string text, Node a, Node b) {
    Node n = leaf(kind, pos);
    n.e->text = std::move(text);
    add(n, std::move(a));
    add(n, std::move(b));
    return n;
  }

  static bool starts_expression(const Token& t) {
    switch (t.kind) {
      case Tok::Name: case Tok::Int: case Tok::Float: case Tok::Str: return true;
      case Tok::Keyword:
        return t.code == pack("None") || t.code == pack("True") || t.code == pack("False") || t.code == pack("not");
      case Tok::Op:
        switch (t.code) {
          case pack("("): case pack("["): case pack("{"): case pack("-"): case pack("+"): case pack("~"): return true;
          default: return false;
        }
      default: return false;
    }
  }

  // test: or_test ['if' or_test 'else' test]
  Node parse_test() {
    Node e = parse_or();
    if (!at_kw("if")) return e;
    take();
    const Pos pos = e.e->pos;
    Node cond = parse_or();
    if (!at_kw("else")) expected("'else' in conditional expression");
    const Token else_kw = take();
    Deeper guard(*this, else_kw.pos);
    Node orelse = parse_test();
    Node n = leaf(Expr::Kind::IfExp, pos);
    add(n, std::move(cond));
    add(n, std::move(e));
    add(n, std::move(orelse));
    return n;
  }

  Node parse_or() {
    Node e = parse_and();
    while (at_kw("or")) {
      take();
      const Pos pos = e.e->pos;
      e = node(Expr::Kind::BoolOp, pos, "or", std::move(e), parse_and());
    }
    return e;
  }

  Node parse_and() {
    Node e = parse_not();
    while (at_kw("and")) {
      take();
      const Pos pos = e.e->pos;
      e = node(Expr::Kind::BoolOp, pos, "and", std::move(e), parse_not());
    }
    return e;
  }

  Node parse_not() {
    if (!at_kw("not")) return parse_comparison();
    const Token t = take();
    Deeper guard(*this, t.pos);
    Node n = leaf(Expr::Kind::Unary, t.pos);
    n.e->text = "not";
    add(n, parse_not());
    return n;
  }

  // Consumes the comparison operator at the next token(s) and returns it; "" if none.
  std::string comparison_op() {
    const Token& t = peek();
    std::string op;
    if (t.kind == Tok::Op && (t.code == pack("==") || t.code == pack("!=") || t.code == pack("<") ||
                              t.code == pack("<=") || t.code == pack(">") || t.code == pack(">="))) {
      op = std::string(t.text);
    } else if (is_kw(t, "in")) {
      op = "in";
    } else if (is_kw(t, "is")) {
      op = is_kw(peek(1), "not") ? "is not" : "is";
    } else if (is_kw(t, "not") && is_kw(peek(1), "in")) {
      op = "not in";
    }
    if (!op.empty()) {
      take();
      if (op == "is not" || op == "not in") take();
    }
    return op;
  }

  // a < b < c becomes (a < b) and (b < c), b copied.
  Node parse_comparison() {
    Node left = parse_binary(0);
    std::string op = comparison_op();
    if (op.empty()) return left;
    Node result;
    const Pos pos = left.e->pos;
    for (;;) {
      Node right = parse_binary(0);
      const uint32_t right_height = right.h;
      const Pos cmp_pos = left.e->pos;
      Node cmp = node(Expr::Kind::Compare, cmp_pos, op, std::move(left), std::move(right));
      op = comparison_op();
      if (!op.empty()) left = Node{clone(*cmp.e->args[1]), right_height};  // the next comparison's left side
      result = result.e ? node(Expr::Kind::BoolOp, pos, "and", std::move(result), std::move(cmp)) : std::move(cmp);
      if (op.empty()) return result;
    }
  }

  // Binary operators by level, loosest first: | ^ & (<< >>) (+ -) (* / // % @).
  static int binary_level(const Token& t) {
    if (t.kind != Tok::Op) return -1;
    switch (t.code) {
      case pack("|"): return 0;
      case pack("^"): return 1;
      case pack("&"): return 2;
      case pack("<<"): case pack(">>"): return 3;
      case pack("+"): case pack("-"): return 4;
      case pack("*"): case pack("/"): case pack("//"): case pack("%"): case pack("@"): return 5;
      default: return -1;
    }
  }

  Node parse_binary(int level) {
    Node left = level == 5 ? parse_unary() : parse_binary(level + 1);
    while (binary_level(peek()) == level) {
      std::string op(take().text);
      const Pos pos = left.e->pos;
      Node right = level == 5 ? parse_unary() : parse_binary(level + 1);
      left = node(Expr::Kind::Binary, pos, std::move(op), std::move(left), std::move(right));
    }
    return left;
  }

  Node parse_unary() {
    const Token& t = peek();
    if (t.kind != Tok::Op || (t.code != pack("-") && t.code != pack("+") && t.code != pack("~"))) return parse_power();
    const Token op = take();
    Deeper guard(*this, op.pos);
    // -9223372036854775808: the one literal that only exists negated.
    if (op.text == "-" && peek().kind == Tok::Int && peek().ival == (uint64_t{1} << 63) && !is_op(peek(1), "**")) {
      take();
      Node n = leaf(Expr::Kind::Int, op.pos);
      n.e->i = std::numeric_limits<int64_t>::min();
      return n;
    }
    Node n = leaf(Expr::Kind::Unary, op.pos);
    n.e->text = std::string(op.text);
    add(n, parse_unary());
    return n;
  }

  Node parse_power() {
    Node base = parse_primary();
    if (!at_op("**")) return base;
    const Token op = take();
    Deeper guard(*this, op.pos);
    const Pos pos = base.e->pos;
    return node(Expr::Kind::Binary, pos, "**", std::move(base), parse_unary());
  }

  // atom followed by calls, subscripts and attribute accesses
  Node parse_primary() {
    Node e = parse_atom();
    for (;;) {
      const Pos pos = e.e->pos;
      if (at_op(".")) {
        take();
        if (peek().kind != Tok::Name) expected("attribute name after '.'");
        Node n = leaf(Expr::Kind::Attribute, pos);
        n.e->text = std::string(take().text);
        add(n, std::move(e));
        e = std::move(n);
      } else if (at_op("(")) {
        const Token open = take();
        Deeper guard(*this, open.pos);
        Node n = leaf(Expr::Kind::Call, pos);
        add(n, std::move(e));
        parse_call_arguments(n);
        e = std::move(n);
      } else if (at_op("[")) {
        const Token open = take();
        Deeper guard(*this, open.pos);
        Node n = leaf(Expr::Kind::Subscript, pos);
        add(n, std::move(e));
        add(n, parse_subscript_index());
        expect_op("]", "after subscript");
        e = std::move(n);
      } else {
        return e;
      }
    }
  }

  // After '(': positional and keyword arguments, trailing comma allowed, then ')'.
  void parse_call_arguments(Node& call) {
    while (!at_op(")")) {
      if (peek().kind == Tok::Name && is_op(peek(1), "=")) {
        std::string name(take().text);
        take();
        Node value = parse_test();
        if (value.h + 1 > call.h) grow(call, value.h + 1);
        call.e->keywords.emplace_back(std::move(name), std::move(value.e));
      } else {
        if (!call.e->keywords.empty()) fail_at(peek().pos, "positional argument after keyword argument");
        if (!starts_expression(peek())) expected("call argument or ')'");
        add(call, parse_test());
      }
      if (!accept_op(",")) break;
    }
    expect_op(")", "after call arguments");
  }

  // After '[': one index, a slice, or several of them (a Tuple).
  Node parse_subscript_index() {
    const Pos pos = peek().pos;
    Node first = parse_subscript_item();
    if (!at_op(",")) return first;
    Node tuple = leaf(Expr::Kind::Tuple, pos);
    add(tuple, std::move(first));
    while (accept_op(",")) {
      if (at_op("]")) break;
      add(tuple, parse_subscript_item());
    }
    return tuple;
  }

  Node parse_subscript_item() {
    const Pos pos = peek().pos;
    Node lower;
    if (!at_op(":")) {
      lower = parse_test();
      if (!at_op(":")) return lower;
    }
    // A slice: [lower] ':' [upper] [':' [step]]
    take();
    Node slice = leaf(Expr::Kind::Slice, pos);
    add(slice, std::move(lower));
    const auto bound = [&]() { return at_op(":") || at_op(",") || at_op("]") ? Node{} : parse_test(); };
    add(slice, bound());
    Node step;
    if (accept_op(":")) step = bound();
    add(slice, std::move(step));
    return slice;
  }

  Node parse_atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Name: {
        Node n = leaf(Expr::Kind::Name, t.pos);
        n.e->text = std::string(t.text);
        take();
        return n;
      }
      case Tok::Int: {
        if (t.ival > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          fail_at(t.pos, "integer literal out of the int64 range");
        Node n = leaf(Expr::Kind::Int, t.pos);
        n.e->i = static_cast<int64_t>(t.ival);
        take();
        return n;
      }
      case Tok::Float: {
        Node n = leaf(Expr::Kind::Float, t.pos);
        n.e->f = t.fval;
        take();
        return n;
      }
      case Tok::Str: {  // adjacent literals concatenate
        Node n = leaf(Expr::Kind::Str, t.pos);
        n.e->text = take().sval;
        while (peek().kind == Tok::Str) n.e->text += take().sval;
        return n;
      }
      case Tok::Keyword:
        if (t.code == pack("None") || t.code == pack("True") || t.code == pack("False")) {
          const Expr::Kind kind = t.code == pack("None") ? Expr::Kind::None : t.code == pack("True") ? Expr::Kind::True : Expr::Kind::False;
          Node n = leaf(kind, t.pos);
          take();
          return n;
        }
        break;
      case Tok::Op:
        if (t.code == pack("(")) return parse_parenthesized();
        if (t.code == pack("[")) return parse_list();
        if (t.code == pack("{")) return parse_dict();
        break;
      default:
        break;
    }
    expected("expression");
  }

  // '(' ')' | '(' test ')' | '(' test ',' [test (',' test)* [',']] ')'
  Node parse_parenthesized() {
    const Token open = take();
    Deeper guard(*this, open.pos);
    if (accept_op(")")) return leaf(Expr::Kind::Tuple, open.pos);
    Node first = parse_test();
    if (!at_op(",")) {
      expect_op(")", "to close '('");
      return first;
    }
    Node tuple = leaf(Expr::Kind::Tuple, open.pos);
    add(tuple, std::move(first));
    while (accept_op(",")) {
      if (at_op(")")) break;
      add(tuple, parse_test());
    }
    expect_op(")", "after tuple elements");
    return tuple;
  }

  Node parse_list() {
    const Token open = take();
    Deeper guard(*this, open.pos);
    Node list = leaf(Expr::Kind::List, open.pos);
    while (!at_op("]")) {
      if (!starts_expression(peek())) expected("list element or ']'");
      add(list, parse_test());
      if (!accept_op(",")) break;
    }
    expect_op("]", "after list elements");
    return list;
  }

  Node parse_dict() {
    const Token open = take();
    Deeper guard(*this, open.pos);
    Node dict = leaf(Expr::Kind::Dict, open.pos);
    while (!at_op("}")) {
      if (!starts_expression(peek())) expected("dict key or '}'");
      add(dict, parse_test());
      expect_op(":", "after dict key");
      add(dict, parse_test());
      if (!accept_op(",")) break;
    }
    expect_op("}", "after dict entries");
    return dict;
  }

  // Comma-separated expressions without brackets (return values, assignment sides): one
  // expression, or a Tuple when there is a comma (a, b, = ...). `element` parses one item.
  template <typename Element>
  Node parse_list_of(Element element) {
    const Pos pos = peek().pos;
    Node first = element();
    if (!at_op(",")) return first;
    Node tuple = leaf(Expr::Kind::Tuple, pos);
    add(tuple, std::move(first));
    while (accept_op(",")) {
      if (!starts_expression(peek())) break;
      add(tuple, element());
    }
    return tuple;
  }
  Node parse_exprlist() {
    return parse_list_of([this] { return parse_test(); });
  }

  // Assignment, for and del targets: names, attributes, subscripts, and tuples or lists of them.
  void check_target(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Name: case Expr::Kind::Attribute: case Expr::Kind::Subscript: return;
      case Expr::Kind::Tuple: case Expr::Kind::List:
        for (const ExprPtr& a : e.args) check_target(*a);
        return;
      default:
        fail_at(e.pos, "cannot assign to " + to_source(e) + " (expected a name, attribute, subscript or tuple of them)");
    }
  }

  // A type annotation: parsed as an expression, kept as its source text.
  std::string parse_type(const char* what) {
    if (!starts_expression(peek())) expected(what);
    const size_t start = static_cast<size_t>(peek().text.data() - src_.data());
    parse_test();
    return std::string(src_.substr(start, last_end_ - start));
  }

  // ---- statements
  StmtPtr stmt(Stmt::Kind kind, Pos pos) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->pos = pos;
    return s;
  }

  // ':' then NEWLINE INDENT statements DEDENT, or one simple statement on the same line.
  void parse_block(std::vector<StmtPtr>& body, const char* context) {
    expect_op(":", context);
    Deeper guard(*this, peek().pos);
    if (peek().kind != Tok::Newline) {
      parse_simple_statement(body);
      return;
    }
    take();
    if (peek().kind != Tok::Indent) expected("an indented block");
    take();
    while (peek().kind != Tok::Dedent && peek().kind != Tok::End) parse_statement(body);
    if (peek().kind == Tok::Dedent) take();
  }

  void parse_statement(std::vector<StmtPtr>& out) {
    const Token& t = peek();
    if (t.kind == Tok::Indent) fail_at(t.pos, "unexpected indent");
    if (is_kw(t, "if")) {
      out.push_back(parse_if());
    } else if (is_kw(t, "while")) {
      StmtPtr s = stmt(Stmt::Kind::While, take().pos);
      s->value = parse_test().e;
      parse_block(s->body, "after while condition");
      out.push_back(std::move(s));
    } else if (is_kw(t, "for")) {
      StmtPtr s = stmt(Stmt::Kind::For, take().pos);
      // Targets stop before `in`: items are parsed below the comparisons.
      Node target = parse_list_of([this] { return parse_binary(0); });
      check_target(*target.e);
      s->targets.push_back(std::move(target.e));
      if (!at_kw("in")) expected("'in' after for target");
      take();
      s->value = parse_exprlist().e;
      parse_block(s->body, "after for iterable");
      out.push_back(std::move(s));
    } else {
      parse_simple_statement(out);
    }
  }

  // 'if' test block ('elif' test block)* ['else' block]; an elif is an If alone in orelse.
  StmtPtr parse_if() {
    StmtPtr s = stmt(Stmt::Kind::If, take().pos);
    s->value = parse_test().e;
    parse_block(s->body, "after if condition");
    if (at_kw("elif")) {
      Deeper guard(*this, peek().pos);
      s->orelse.push_back(parse_if());
    } else if (at_kw("else")) {
      take();
      parse_block(s->orelse, "after 'else'");
    }
    return s;
  }

  // +=, //=, <<=, ...: the lexer's operators that end in '=' but do not compare.
  static bool is_aug_op(const Token& t) {
    return t.kind == Tok::Op && t.text.size() >= 2 && t.text.back() == '=' && t.code != pack("==") &&
           t.code != pack("!=") && t.code != pack("<=") && t.code != pack(">=");
  }

  void parse_simple_statement(std::vector<StmtPtr>& out) {
    const Token& t = peek();
    const Pos pos = t.pos;
    StmtPtr s;
    if (is_kw(t, "pass") || is_kw(t, "break") || is_kw(t, "continue")) {
      s = stmt(t.text == "pass" ? Stmt::Kind::Pass : t.text == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, pos);
      take();
    } else if (is_kw(t, "return") || is_kw(t, "raise")) {
      s = stmt(t.text == "return" ? Stmt::Kind::Return : Stmt::Kind::Raise, pos);
      take();
      if (peek().kind != Tok::Newline) s->value = (s->kind == Stmt::Kind::Return ? parse_exprlist() : parse_test()).e;
    } else if (is_kw(t, "assert")) {
      s = stmt(Stmt::Kind::Assert, pos);
      take();
      s->value = parse_test().e;
      s->targets.push_back(accept_op(",") ? parse_test().e : nullptr);  // the message, null when none
    } else if (is_kw(t, "del")) {
      s = stmt(Stmt::Kind::Del, pos);
      take();
      do {
        if (!starts_expression(peek())) expected("target after 'del'");
        Node target = parse_binary(0);
        check_target(*target.e);
        s->targets.push_back(std::move(target.e));
      } while (accept_op(","));
    } else {
      if (!starts_expression(t)) expected("statement");
      Node first = parse_exprlist();
      if (at_op("=")) {
        s = stmt(Stmt::Kind::Assign, pos);
        s->value = std::move(first.e);
        while (accept_op("=")) {  // a = b = value: all but the last are targets
          check_target(*s->value);
          s->targets.push_back(std::move(s->value));
          if (!starts_expression(peek())) expected("expression after '='");
          s->value = parse_exprlist().e;
        }
      } else if (is_aug_op(peek())) {
        s = stmt(Stmt::Kind::AugAssign, pos);
        const Token op = take();
        if (first.e->kind != Expr::Kind::Name && first.e->kind != Expr::Kind::Attribute && first.e->kind != Expr::Kind::Subscript)
          fail_at(first.e->pos, "cannot augment-assign to " + to_source(*first.e));
        s->text = std::string(op.text.substr(0, op.text.size() - 1));
        s->targets.push_back(std::move(first.e));
        s->value = parse_exprlist().e;
      } else if (at_op(":")) {
        take();
        s = stmt(Stmt::Kind::AnnAssign, pos);
        if (first.e->kind != Expr::Kind::Name && first.e->kind != Expr::Kind::Attribute && first.e->kind != Expr::Kind::Subscript)
          fail_at(first.e->pos, "cannot annotate " + to_source(*first.e));
        s->targets.push_back(std::move(first.e));
        s->text = parse_type("type after ':'");
        if (accept_op("=")) s->value = parse_exprlist().e;
      } else {
        s = stmt(Stmt::Kind::Expr, pos);
        s->value = std::move(first.e);
      }
    }
    expect_newline("after statement");
    out.push_back(std::move(s));
  }

  // ---- definitions
  // 'def' name '(' [param (',' param)* [',']] ')' ['->' type] block
  FunctionDef parse_def() {
    FunctionDef f;
    f.pos = take().pos;
    f.name = std::string(expect_name("function name after 'def'").text);
    expect_op("(", "after function name");
    while (!at_op(")")) {
      Param p;
      const Token name = expect_name("parameter name or ')'");
      p.name = std::string(name.text);
      p.pos = name.pos;
      if (accept_op(":")) p.type = parse_type("parameter type after ':'");
      if (accept_op("=")) {
        if (!starts_expression(peek())) expected("default value after '='");
        p.default_value = parse_test().e;
      }
      f.params.push_back(std::move(p));
      if (!accept_op(",")) break;
    }
    expect_op(")", "after parameters");
    if (accept_op("->")) f.return_type = parse_type("return type after '->'");
    parse_block(f.body, "after function signature");
    return f;
  }

  static std::vector<std::string> string_list(const Expr& e, const char* what, Parser& p) {
    if (e.kind != Expr::Kind::List) p.fail_at(e.pos, std::string("expected a list of strings for ") + what);
    std::vector<std::string> out;
    for (const ExprPtr& a : e.args) {
      if (a->kind != Expr::Kind::Str) p.fail_at(a->pos, std::string("expected a string in ") + what);
      out.push_back(a->text);
    }
    return out;
  }

  // 'class' name ['(' bases ')'] ':' NEWLINE INDENT items DEDENT
  ClassDef parse_class() {
    ClassDef c;
    c.pos = take().pos;
    c.name = std::string(expect_name("class name after 'class'").text);
    if (accept_op("(")) {
      while (!at_op(")")) {
        c.bases.push_back(parse_type("base class or ')'"));
        if (!accept_op(",")) break;
      }
      expect_op(")", "after base classes");
    }
    expect_op(":", "after class header");
    Deeper guard(*this, peek().pos);
    expect_newline("after class header");
    if (peek().kind != Tok::Indent) expected("an indented class body");
    take();
    while (peek().kind != Tok::Dedent && peek().kind != Tok::End) parse_class_item(c);
    if (peek().kind == Tok::Dedent) take();
    return c;
  }

  void parse_class_item(ClassDef& c) {
    const Token& t = peek();
    if (t.kind == Tok::Indent) fail_at(t.pos, "unexpected indent");
    if (is_kw(t, "def")) {
      c.methods.push_back(parse_def());
      return;
    }
    if (is_kw(t, "pass")) {
      take();
      expect_newline("after 'pass'");
      return;
    }
    if (t.kind != Tok::Name) expected("class attribute, annotation or method");
    const Token name = take();
    if (accept_op(":")) {  // name : Type [= value]
      ClassAttr a;
      a.name = std::string(name.text);
      a.pos = name.pos;
      a.type = parse_type("type after ':'");
      if (accept_op("=")) a.value = parse_test().e;
      c.attributes.push_back(std::move(a));
    } else if (name.text == "__annotations__" && at_op("[")) {  // __annotations__["0"] = Type
      take();
      if (peek().kind != Tok::Str) expected("attribute name string after '__annotations__['");
      ClassAttr a;
      a.name = take().sval;
      a.pos = name.pos;
      expect_op("]", "after attribute name");
      expect_op("=", "after '__annotations__[...]'");
      a.type = parse_type("type after '='");
      c.attributes.push_back(std::move(a));
    } else if (accept_op("=")) {
      if (!starts_expression(peek())) expected("expression after '='");
      Node value = parse_test();
      if (name.text == "__parameters__") {
        c.parameters = string_list(*value.e, "__parameters__", *this);
      } else if (name.text == "__buffers__") {
        c.buffers = string_list(*value.e, "__buffers__", *this);
      } else {
        c.constants.emplace_back(std::string(name.text), std::move(value.e));
      }
    } else {
      expected("':' or '=' after class attribute name");
    }
    expect_newline("after class attribute");
  }

  // import a.b [as c], ... | from [.]*a.b import (x [as y], ... | '*' | '(' ... ')'): kept as text.
  std::string parse_import() {
    const Token first = take();
    const size_t start = static_cast<size_t>(first.text.data() - src_.data());
    const auto dotted = [&]() {
      expect_name("module name");
      while (accept_op(".")) expect_name("name after '.'");
    };
    const auto alias = [&]() {
      if (peek().kind == Tok::Name && peek().text == "as") {
        take();
        expect_name("name after 'as'");
      }
    };
    if (first.text == "import") {
      do {
        dotted();
        alias();
      } while (accept_op(","));
    } else {
      bool relative = false;
      while (accept_op(".")) relative = true;
      if (!relative || !at_kw("import")) dotted();
      if (!at_kw("import")) expected("'import' after module name");
      take();
      if (!accept_op("*")) {
        const bool parenthesized = accept_op("(");
        do {
          if (parenthesized && at_op(")")) break;
          expect_name("imported name");
          alias();
        } while (accept_op(","));
        if (parenthesized) expect_op(")", "after imported names");
      }
    }
    std::string text(src_.substr(start, last_end_ - start));
    expect_newline("after import");
    return text;
  }

  std::string_view src_;
  const std::string& path_;
  const ParseLimits& limits_;
  Lexer lex_;
  std::vector<Token> buf_;  // lookahead
  size_t head_ = 0;
  size_t last_end_ = 0;     // source offset just after the last token taken
  size_t depth_ = 0;
};

// ---- printing
// Binding strength, loosest first (Python's table).
enum Prec : int {
  kTest = 1, kOr, kAnd, kNot, kCompare, kBitOr, kBitXor, kBitAnd, kShift, kArith, kTerm, kUnary, kPower, kAtom
};

int binary_prec(const std::string& op) {
  if (op == "|") return kBitOr;
  if (op == "^") return kBitXor;
  if (op == "&") return kBitAnd;
  if (op == "<<" || op == ">>") return kShift;
  if (op == "+" || op == "-") return kArith;
  if (op == "**") return kPower;
  return kTerm;
}

int precedence(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::IfExp: return kTest;
    case Expr::Kind::BoolOp: return e.text == "or" ? kOr : kAnd;
    case Expr::Kind::Unary: return e.text == "not" ? kNot : kUnary;
    case Expr::Kind::Compare: return kCompare;
    case Expr::Kind::Binary: return binary_prec(e.text);
    case Expr::Kind::Int: return e.i < 0 ? kUnary : kAtom;
    case Expr::Kind::Float: return std::signbit(e.f) ? kUnary : kAtom;
    case Expr::Kind::Slice: return 0;
    default: return kAtom;
  }
}

void render(const Expr& e, int min_prec, std::string& out);

void render_list(const std::vector<ExprPtr>& items, std::string& out) {
  for (size_t k = 0; k < items.size(); ++k) {
    if (k) out += ", ";
    render(*items[k], kTest, out);
  }
}

void render_string(const std::string& s, std::string& out) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void render_float(double f, std::string& out) {
  if (std::isnan(f)) {
    out += "nan";
    return;
  }
  if (std::isinf(f)) {
    out += f < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  const std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}

// A subscript item: slices stand bare (a[1:2]), anything else as a tuple element.
void render_index(const Expr& e, std::string& out) { render(e, e.kind == Expr::Kind::Slice ? 0 : kTest, out); }

// An object of . ( [ : literals need parentheses (5.x would lex as a float).
void render_object(const Expr& e, std::string& out) {
  const bool paren = precedence(e) < kAtom || e.kind == Expr::Kind::Int || e.kind == Expr::Kind::Float;
  if (paren) out += '(';
  render(e, paren ? 0 : kAtom, out);
  if (paren) out += ')';
}

void render(const Expr& e, int min_prec, std::string& out) {
  const int prec = precedence(e);
  const bool paren = prec < min_prec;
  if (paren) out += '(';
  const auto arg = [&](size_t k, int p) {
    if (k < e.args.size() && e.args[k]) render(*e.args[k], p, out);
  };
  switch (e.kind) {
    case Expr::Kind::Name: out += e.text; break;
    case Expr::Kind::Int: out += std::to_string(e.i); break;
    case Expr::Kind::Float: render_float(e.f, out); break;
    case Expr::Kind::Str: render_string(e.text, out); break;
    case Expr::Kind::None: out += "None"; break;
    case Expr::Kind::True: out += "True"; break;
    case Expr::Kind::False: out += "False"; break;
    case Expr::Kind::Attribute:
      if (!e.args.empty() && e.args[0]) render_object(*e.args[0], out);
      out += '.';
      out += e.text;
      break;
    case Expr::Kind::Call: {
      if (!e.args.empty() && e.args[0]) render_object(*e.args[0], out);
      out += '(';
      bool first = true;
      for (size_t k = 1; k < e.args.size(); ++k, first = false) {
        if (!first) out += ", ";
        arg(k, kTest);
      }
      for (const auto& [name, value] : e.keywords) {
        if (!first) out += ", ";
        first = false;
        out += name;
        out += '=';
        if (value) render(*value, kTest, out);
      }
      out += ')';
      break;
    }
    case Expr::Kind::Subscript: {
      if (!e.args.empty() && e.args[0]) render_object(*e.args[0], out);
      out += '[';
      const Expr* index = e.args.size() > 1 ? e.args[1].get() : nullptr;
      if (index && index->kind == Expr::Kind::Tuple && !index->args.empty()) {
        for (size_t k = 0; k < index->args.size(); ++k) {
          if (k) out += ", ";
          render_index(*index->args[k], out);
        }
        if (index->args.size() == 1) out += ',';
      } else if (index) {
        render_index(*index, out);
      }
      out += ']';
      break;
    }
    case Expr::Kind::Slice:
      arg(0, kTest);
      out += ':';
      arg(1, kTest);
      if (e.args.size() > 2 && e.args[2]) {
        out += ':';
        arg(2, kTest);
      }
      break;
    case Expr::Kind::List:
      out += '[';
      render_list(e.args, out);
      out += ']';
      break;
    case Expr::Kind::Tuple:
      out += '(';
      render_list(e.args, out);
      if (e.args.size() == 1) out += ',';
      out += ')';
      break;
    case Expr::Kind::Dict:
      out += '{';
      for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
        if (k) out += ", ";
        arg(k, kTest);
        out += ": ";
        arg(k + 1, kTest);
      }
      out += '}';
      break;
    case Expr::Kind::Unary:
      out += e.text;
      if (e.text == "not") out += ' ';
      arg(0, prec);
      break;
    case Expr::Kind::Binary:
    case Expr::Kind::Compare:
    case Expr::Kind::BoolOp: {
      // Left-associative: the right operand binds tighter; ** is right-associative (its right
      // operand may be unary: x ** -y); comparisons do not chain.
      const bool power = e.kind == Expr::Kind::Binary && e.text == "**";
      const bool compare = e.kind == Expr::Kind::Compare;
      arg(0, power || compare ? prec + 1 : prec);
      out += ' ';
      out += e.text;
      out += ' ';
      arg(1, power ? kUnary : prec + 1);
      break;
    }
    case Expr::Kind::IfExp:
      arg(1, kOr);
      out += " if ";
      arg(0, kOr);
      out += " else ";
      arg(2, kTest);
      break;
  }
  if (paren) out += ')';
}

}  // namespace

SourceFile parse_source(std::string_view source, const std::string& path, const ParseLimits& limits) {
  return Parser(source, path, limits).parse_file();
}

std::string to_source(const Expr& e) {
  std::string out;
  render(e, 0, out);
  return out;
}

}  // namespace amanda::torchscript
