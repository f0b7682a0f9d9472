// The compact form of a pattern (docs/mapping-tables.md, "Compact patterns"): one op per line,
// edges following from value names, as PNNX's pattern graphs read.
//
//   dst:
//     graph: |
//       wt = Transpose(w) {perm: [1, 0]}
//       mm = MatMul(x, wt)
//       y = Add(mm, b)
//
// A line is `OUTS = TYPE(ARGS) [{ATTRS}]`. An argument is a value name, `{expr}` (a constant
// input, as `const:`), or `_` (nothing connected), optionally `PORT=` before it and `?` after it
// (optional); an output is a value name or `_`, optionally `PORT:` before it. Ports without a
// PORT go by position: on the mapper side they take the op schema's port names. A value that one
// line makes and a later line reads is an edge; any other value name is a capture (`ref:`),
// shared with the other side of the rule. ATTRS is a YAML flow map, as `attrs:`.
#include "compact_pattern.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <unordered_map>
#include <map>

#include "amanda/text/document.h"

namespace amanda::mapping {

using text::Tree;

namespace {

[[noreturn]] void fail(const SourceLoc& loc, const std::string& rule, const std::string& msg) {
  throw ParseError(loc, "rule '" + rule + "': graph: " + msg);
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// A value name: letters, digits, '_' and '.', not starting with a digit; optionally an element of
// a list, NAME[K] (a list capture's port `xs[0]`, a value a `for` line made).
bool is_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  size_t end = s.size();
  if (s.back() == ']') {
    size_t open = s.find('[');
    if (open == std::string::npos || open == 0 || open + 2 > s.size() - 1) return false;
    for (size_t i = open + 1; i + 1 < s.size(); ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    end = open;
  }
  for (size_t i = 0; i < end; ++i) {
    char c = s[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  }
  return true;
}

// Splits at top-level commas (not inside (), [], {} or quotes).
std::vector<std::string> split_args(std::string_view s, const SourceLoc& loc, const std::string& rule) {
  std::vector<std::string> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) fail(loc, rule, "unbalanced '" + std::string(1, c) + "'");
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0 || quote) fail(loc, rule, "unbalanced brackets or quotes");
  std::string last = trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

// The closing bracket matching s[open].
size_t matching(std::string_view s, size_t open, const SourceLoc& loc, const std::string& rule) {
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && --depth == 0) return i;
  }
  fail(loc, rule, "no closing bracket for the one at column " + std::to_string(open + 1));
}

struct Line {
  std::vector<std::pair<std::string, std::string>> outs;  // (port or "", value or "_")
  std::string type;
  struct Arg {
    std::string port, value, expr;  // value: a name or "_"; expr: "{...}"
    bool optional = false;
  };
  std::vector<Arg> args;
  std::string attrs;  // "{...}" or ""
  SourceLoc loc;
};

Line parse_line(const std::string& text, const SourceLoc& loc, const std::string& rule) {
  Line l;
  l.loc = loc;
  size_t eq = std::string::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(' || text[i] == '{') break;
    if (text[i] == '=') {
      eq = i;
      break;
    }
  }
  if (eq == std::string::npos) fail(loc, rule, "'" + text + "': a line is OUTS = TYPE(ARGS) [{ATTRS}]");
  for (const std::string& o : split_args(std::string_view(text).substr(0, eq), loc, rule)) {
    size_t c = o.find(':');
    std::string port = c == std::string::npos ? "" : trim(o.substr(0, c)), v = trim(c == std::string::npos ? o : o.substr(c + 1));
    if (v != "_" && !is_name(v)) fail(loc, rule, "'" + o + "' is not a value name");
    l.outs.emplace_back(port, v);
  }
  std::string rest = trim(std::string_view(text).substr(eq + 1));
  size_t open = rest.find('(');
  if (open == std::string::npos) fail(loc, rule, "'" + text + "': no '(' after the op type");
  l.type = trim(rest.substr(0, open));
  if (l.type.empty()) fail(loc, rule, "'" + text + "': no op type");
  size_t close = matching(rest, open, loc, rule);
  for (const std::string& a : split_args(std::string_view(rest).substr(open + 1, close - open - 1), loc, rule)) {
    Line::Arg arg;
    std::string s = a;
    // PORT=VALUE (an '=' before any bracket; '==' belongs to an expression)
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '{' || s[i] == '(' || s[i] == '[' || s[i] == '\'' || s[i] == '"') break;
      if (s[i] == '=' && (i + 1 >= s.size() || s[i + 1] != '=')) {
        arg.port = trim(s.substr(0, i));
        s = trim(s.substr(i + 1));
        break;
      }
    }
    if (!s.empty() && s.back() == '?') {
      arg.optional = true;
      s = trim(s.substr(0, s.size() - 1));
    }
    if (!s.empty() && s.front() == '{') arg.expr = s;
    else if (s == "_" || is_name(s)) arg.value = s;
    else fail(loc, rule, "argument '" + a + "' is not a value name, {expr} or _");
    l.args.push_back(std::move(arg));
  }
  std::string tail = trim(rest.substr(close + 1));
  if (!tail.empty()) {
    if (tail.front() != '{' || matching(tail, 0, loc, rule) != tail.size() - 1)
      fail(loc, rule, "'" + tail + "': after the arguments only {ATTRS} may follow");
    l.attrs = tail;
  }
  return l;
}

}  // namespace

Pattern compact_pattern(const Tree& t, const std::string& rule,
                        const std::function<void(const Tree&, std::vector<AttrSpec>&)>& attrs_of) {
  if (!t.is_scalar() || !t.scalar.is_string()) throw ParseError(t.loc, "rule '" + rule + "': graph: must be text, one op per line");
  const std::string& text = t.scalar.as_string();
  std::vector<Line> lines;
  size_t start = 0, row = 0;
  while (start <= text.size()) {
    size_t e = text.find('\n', start);
    if (e == std::string::npos) e = text.size();
    std::string s = trim(std::string_view(text).substr(start, e - start));
    SourceLoc loc = t.loc;
    // a block scalar (`graph: |`, several lines) starts on the line after its indicator
    if (loc.line) loc.line += static_cast<int>(row) + (text.find('\n') != std::string::npos ? 1 : 0);
    if (!s.empty() && s[0] != '#') lines.push_back(parse_line(s, loc, rule));
    start = e + 1;
    ++row;
  }
  if (lines.empty()) throw ParseError(t.loc, "rule '" + rule + "': graph: has no ops");
  // value -> (line, output position) of its producer; which values are read by a later line
  std::map<std::string, std::pair<size_t, size_t>> made;
  std::map<std::string, bool> read;
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const auto& a : lines[i].args)
      if (!a.value.empty() && a.value != "_" && made.count(a.value)) read[a.value] = true;
    for (size_t k = 0; k < lines[i].outs.size(); ++k) {
      const std::string& v = lines[i].outs[k].second;
      if (v == "_") continue;
      if (made.count(v)) fail(lines[i].loc, rule, "value '" + v + "' is made twice");
      made[v] = {i, k};
    }
  }
  Pattern p;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    OpSpec op;
    op.loc = l.loc;
    op.type = l.type;
    op.id = "#line" + std::to_string(i);
    op.inputs_given = op.outputs_given = true;
    for (size_t k = 0; k < l.args.size(); ++k) {
      const auto& a = l.args[k];
      PortSpec s;
      s.position = k;
      s.loc = l.loc;
      s.optional = a.optional;
      if (!a.port.empty()) {
        s.name = std::make_unique<Expr>();
        s.name->literal = ir::Value(a.port);
      } else {
        s.by_position = true;
      }
      if (!a.expr.empty()) {
        s.value = parse_template(a.expr, l.loc);
      } else if (a.value != "_") {
        auto it = made.find(a.value);
        if (it != made.end() && it->second.first < i) {
          EdgeSpec e;
          e.loc = l.loc;
          e.src_op = it->second.first;
          e.src_port = "#" + std::to_string(it->second.second) + "o";
          e.dst_op = i;
          e.dst_port = "#" + std::to_string(k) + "i";
          p.edges.push_back(std::move(e));
        } else if (it != made.end()) {
          fail(l.loc, rule, "value '" + a.value + "' is read before the line that makes it");
        } else {
          s.ref = a.value;
        }
      }
      op.inputs.push_back(std::move(s));
    }
    for (size_t k = 0; k < l.outs.size(); ++k) {
      const auto& [port, v] = l.outs[k];
      PortSpec s;
      s.position = k;
      s.loc = l.loc;
      if (!port.empty()) {
        s.name = std::make_unique<Expr>();
        s.name->literal = ir::Value(port);
      } else {
        s.by_position = true;
      }
      if (v != "_" && !read.count(v)) s.ref = v;  // read by no line: a capture of the rule's boundary
      op.outputs.push_back(std::move(s));
    }
    if (!l.attrs.empty()) {
      // The same few attribute maps ({axis: 0}, {perm: [1, 0]}) recur on many lines: each is read
      // by libyaml once per file (a parser per line cost more than the rest of the table).
      thread_local std::unordered_map<std::string, Tree> parsed;
      std::string key = l.loc.file + '\n' + l.attrs;
      auto it = parsed.find(key);
      if (it == parsed.end()) {
        if (parsed.size() > 4096) parsed.clear();
        it = parsed.emplace(std::move(key), text::parse_tree(l.attrs, text::Format::Yaml, l.loc.file)).first;
      }
      const Tree& a = it->second;
      if (!a.is_map()) fail(l.loc, rule, "{ATTRS} must be a map");
      attrs_of(a, op.attrs);
    }
    p.ops.push_back(std::move(op));
  }
  return p;
}

// ---------------------------------------------------------------- lists (templates)

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `var` replaced by `value` where it is a whole identifier (not inside '...' string literals, not
// after a '.': a port name such as values.i is left alone).
std::string substitute(std::string_view s, const std::string& var, const std::string& value) {
  std::string out;
  char quote = 0;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (quote) {
      out += c;
      if (c == quote) quote = 0;
      ++i;
      continue;
    }
    if (c == '\'') {
      quote = c;
      out += c;
      ++i;
      continue;
    }
    if (ident_start(c) && (i == 0 || (!ident_char(s[i - 1]) && s[i - 1] != '.'))) {
      size_t e = i;
      while (e < s.size() && ident_char(s[e])) ++e;
      std::string_view w = s.substr(i, e - i);
      out += w == var ? value : std::string(w);
      i = e;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

struct Expander {
  const std::string& rule;
  const SourceLoc& loc;
  const std::function<int64_t(const std::string&)>& eval_int;
  std::map<std::string, int64_t> made_len;  // lists the mapper makes: their lengths so far
  std::string out;

  int64_t count(const std::string& expr) {
    int64_t n = eval_int(expr);
    if (n < 0) fail(loc, rule, "'" + expr + "' gives " + std::to_string(n) + ", not a length");
    if (n > 100000) fail(loc, rule, "'" + expr + "' gives " + std::to_string(n) + " (more than 100000 list elements)");
    return n;
  }
  int64_t len_of(const std::string& name) {
    auto it = made_len.find(name);
    return it != made_len.end() ? it->second : count("len(" + name + ")");
  }
  // NAME[EXPR] -> NAME[K]; other names unchanged.
  std::string index(const std::string& v) {
    if (v.empty() || v.back() != ']' || v.front() == '{') return v;
    size_t open = v.find('[');
    if (open == std::string::npos || open == 0) return v;
    std::string e = v.substr(open + 1, v.size() - open - 2);
    int64_t k = count(e);
    std::string name = v.substr(0, open);
    return name + "[" + std::to_string(k) + "]";
  }
  static bool spread(const std::string& v, std::string& name, std::string& len_expr) {
    size_t d = v.find("...");
    if (d == std::string::npos || v.front() == '{') return false;
    name = trim(v.substr(0, d));
    std::string rest = trim(v.substr(d + 3));
    len_expr.clear();
    if (!rest.empty()) {
      if (rest.front() != '{' || rest.back() != '}') return false;
      len_expr = rest.substr(1, rest.size() - 2);
    }
    return is_name(name);
  }

  void line(const std::string& text, bool in_loop) {
    size_t eq = std::string::npos;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '{' && i >= 3 && text.compare(i - 3, 3, "...") == 0) {  // a length: ys...{N}
        i = matching(text, i, loc, rule);
        continue;
      }
      if (text[i] == '(' || text[i] == '{') break;
      if (text[i] == '=') {
        eq = i;
        break;
      }
    }
    if (eq == std::string::npos) fail(loc, rule, "'" + text + "': a line is OUTS = TYPE(ARGS) [{ATTRS}]");
    std::string outs;
    for (const std::string& o : split_args(std::string_view(text).substr(0, eq), loc, rule)) {
      size_t c = o.find(':');
      std::string port = c == std::string::npos ? "" : trim(o.substr(0, c)), v = trim(c == std::string::npos ? o : o.substr(c + 1));
      std::string name, len_expr;
      if (spread(v, name, len_expr)) {
        int64_t n = len_expr.empty() ? len_of(name) : count(len_expr);
        if (!len_expr.empty()) made_len[name] = n;
        for (int64_t k = 0; k < n; ++k)
          outs += (outs.empty() ? "" : ", ") + (port.empty() ? "" : port + "." + std::to_string(k) + ":") + name + "[" + std::to_string(k) + "]";
        continue;
      }
      v = index(v);
      if (in_loop && v.back() == ']') {  // an element a `for` line makes
        size_t open = v.find('[');
        int64_t k = std::stoll(v.substr(open + 1, v.size() - open - 2));
        int64_t& n = made_len[v.substr(0, open)];
        n = std::max(n, k + 1);
      }
      outs += (outs.empty() ? "" : ", ") + (port.empty() ? "" : port + ":") + v;
    }
    if (outs.empty()) outs = "_";  // (a spread of an empty list)
    std::string rest = trim(std::string_view(text).substr(eq + 1));
    size_t open = rest.find('(');
    if (open == std::string::npos) fail(loc, rule, "'" + text + "': no '(' after the op type");
    size_t close = matching(rest, open, loc, rule);
    std::string args;
    for (const std::string& a : split_args(std::string_view(rest).substr(open + 1, close - open - 1), loc, rule)) {
      std::string port, v = a;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '{' || v[i] == '(' || v[i] == '[' || v[i] == '\'' || v[i] == '"') break;
        if (v[i] == '=' && (i + 1 >= v.size() || v[i + 1] != '=')) {
          port = trim(v.substr(0, i));
          v = trim(v.substr(i + 1));
          break;
        }
      }
      std::string name, len_expr;
      if (spread(v, name, len_expr)) {
        if (!len_expr.empty()) fail(loc, rule, "'" + a + "': a length {N} goes with a list a line makes (an output)");
        int64_t n = len_of(name);
        for (int64_t k = 0; k < n; ++k)
          args += (args.empty() ? "" : ", ") + (port.empty() ? "" : port + "." + std::to_string(k) + "=") + name + "[" + std::to_string(k) + "]";
        continue;
      }
      bool opt = !v.empty() && v.back() == '?';
      if (opt) v = trim(v.substr(0, v.size() - 1));
      v = index(v);
      args += (args.empty() ? "" : ", ") + (port.empty() ? "" : port + "=") + v + (opt ? "?" : "");
    }
    out += outs + " = " + rest.substr(0, open) + "(" + args + ")" + rest.substr(close + 1) + "\n";
    // A hostile table must not expand without bound: at most kMaxLines ops and kMaxText bytes.
    if (++lines > kMaxLines || out.size() > kMaxText)
      fail(loc, rule, "the lists expand to more than " + std::to_string(kMaxLines) + " lines or " + std::to_string(kMaxText >> 20) + " MiB");
  }
  // A loop body split at ';' outside brackets and quotes (empty parts dropped).
  std::vector<std::string> split_statements(const std::string& body) {
    std::vector<std::string> out;
    int depth = 0;
    char quote = 0;
    size_t start = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
      char c = i < body.size() ? body[i] : ';';
      if (quote) {
        if (c == quote) quote = 0;
        if (i < body.size()) continue;
      }
      if (c == '\'' || c == '"') quote = c;
      else if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c == ')' || c == ']' || c == '}') --depth;
      else if (c == ';' && (depth == 0 || i == body.size())) {
        std::string st = trim(std::string_view(body).substr(start, i - start));
        if (!st.empty()) out.push_back(st);
        start = i + 1;
      }
    }
    if (depth != 0 || quote) fail(loc, rule, "'" + body + "': unbalanced brackets or quotes");
    return out;
  }
  static constexpr size_t kMaxLines = 100000, kMaxText = size_t(64) << 20;
  size_t lines = 0;

  void run(std::string_view text) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t e = text.find('\n', start);
      if (e == std::string::npos) e = text.size();
      std::string s = trim(text.substr(start, e - start));
      start = e + 1;
      if (s.empty() || s[0] == '#') continue;
      if (s.starts_with("for ")) {
        // for VAR in range([LO,] HI): LINE
        size_t in = s.find(" in ");
        std::string var = in == std::string::npos ? "" : trim(s.substr(4, in - 4));
        size_t r = in == std::string::npos ? std::string::npos : s.find("range(", in);
        if (var.empty() || !ident_start(var[0]) || r == std::string::npos || trim(s.substr(in + 4, r - in - 4)) != "")
          fail(loc, rule, "'" + s + "': a loop is `for VAR in range([LO,] HI): LINE`");
        size_t close = matching(s, r + 5, loc, rule);
        std::vector<std::string> bounds = split_args(std::string_view(s).substr(r + 6, close - r - 6), loc, rule);
        std::string body = trim(std::string_view(s).substr(close + 1));
        if (bounds.empty() || bounds.size() > 2 || body.empty() || body[0] != ':')
          fail(loc, rule, "'" + s + "': a loop is `for VAR in range([LO,] HI): LINE`");
        body = trim(body.substr(1));
        int64_t lo = bounds.size() == 2 ? eval_int(bounds[0]) : 0, hi = count(bounds.back());
        if (hi - lo > 100000) fail(loc, rule, "'" + s + "' repeats its line more than 100000 times");
        // The body is one line, or several separated by ';' (outside brackets and quotes), written
        // in order for each i: a chain where step i reads what step i - 1 made (a layer's input
        // is the previous layer's output) needs every line of a step before the next step.
        std::vector<std::string> stmts = split_statements(body);
        for (int64_t i = lo; i < hi; ++i)
          for (const std::string& st : stmts) line(substitute(st, var, std::to_string(i)), true);
        // The lists the lines make exist even when they repeat zero times (a spread of them is empty).
        for (const std::string& st : stmts)
          if (size_t eq = st.find('='); eq != std::string::npos)
            for (const std::string& o : split_args(std::string_view(st).substr(0, eq), loc, rule)) {
              std::string v = trim(o.substr(o.find(':') == std::string::npos ? 0 : o.find(':') + 1));
              if (size_t b = v.find('['); b != std::string::npos && b > 0) made_len.try_emplace(v.substr(0, b), 0);
            }
        continue;
      }
      line(s, false);
    }
  }
};

}  // namespace

std::vector<std::string> compact_types(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  SourceLoc loc;
  while (start <= text.size()) {
    size_t e = text.find('\n', start);
    if (e == std::string::npos) e = text.size();
    std::string s = trim(text.substr(start, e - start));
    start = e + 1;
    if (!s.empty() && s[0] != '#') out.push_back(parse_line(s, loc, "").type);
  }
  return out;
}

bool uses_lists(std::string_view text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t e = text.find('\n', start);
    if (e == std::string::npos) e = text.size();
    std::string s = trim(text.substr(start, e - start));
    start = e + 1;
    if (s.starts_with("for ")) return true;
    // "..." or a NAME[...] index that is not a number, outside {expressions} and quotes
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"') quote = c;
      else if (c == '{') ++depth;
      else if (c == '}') --depth;
      else if (depth == 0 && s.compare(i, 3, "...") == 0) return true;
      else if (depth == 0 && c == '[' && i > 0 && (ident_char(s[i - 1]))) {
        size_t j = i + 1;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        if (j == i + 1 || j >= s.size() || s[j] != ']') return true;
      }
    }
  }
  return false;
}

std::string expand_lists(std::string_view text, const std::string& rule, const SourceLoc& loc,
                         const std::function<int64_t(const std::string&)>& eval_int) {
  Expander x{rule, loc, eval_int, {}, {}};
  x.run(text);
  return x.out;
}

}  // namespace amanda::mapping
