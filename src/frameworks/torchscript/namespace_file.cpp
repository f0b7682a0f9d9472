// The compact form of a PyTorch namespace (namespaces/pytorch/<version>.ops). It carries exactly what
// the plugin's namespace holds (see do_namespace / add_prim_ops in src/frameworks/torch/plugin.cpp):
//
//   amanda-ops 1                              first line: the format and its version
//   namespace<TAB>NAME<TAB>TYPE_SYSTEM        second line
//   op<TAB>TYPE<TAB>DOMAIN                    an op (DOMAIN may be empty); the lines below belong to it
//   attr<TAB>NAME<TAB>TYPE                    an attribute with a type and nothing else
//   in<TAB>ARITY<TAB>NAME<TAB>TYPE[<TAB>DEFAULT]    an input port, in order
//   out<TAB>ARITY<TAB>NAME<TAB>TYPE[<TAB>DEFAULT]   an output port, in order
//
// Lines end with '\n'; lines starting with '#' and empty lines are skipped. ARITY is `1` (single),
// `?` (optional) or `*` (variadic, zero or more, one type). A port is what plugin.cpp's port()
// builds: a `name` attribute of constant `str` NAME, a type string, its arity, and, when DEFAULT is
// given, a `default` attribute of type Any holding that value. DEFAULT is
//   null | true | false | an int (-12) | a float | "a string" | [v,v,...] (nested lists allowed)
// A float always shows it is one (0.1, 1.0, 1e-05, inf, -inf, nan) and is written in the shortest
// form that reads back to the same double. Strings escape \\ \" \n \r \t and other control bytes
// as \xHH; other bytes are kept as they are. Anything else (maps, tensors, ports or attributes of
// other shapes, composite ops, type constraints...) cannot be written: write_namespace_file throws.
#include "frameworks/torchscript/namespace_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "amanda/schema/compact_file.h"
#include "amanda/support/diagnostics.h"

namespace amanda::torchscript {

namespace {

constexpr std::string_view kMagic = "amanda-ops 1";

// ---------------------------------------------------------------- the shapes the form carries

schema::AttrType constant_str(std::string_view v) {
  schema::AttrType a;
  a.form = schema::AttrType::Form::Constant;
  a.type = "str";
  a.value = ir::Value(v);
  return a;
}

schema::AttrType default_any(ir::Value v) {
  schema::AttrType a;
  a.form = schema::AttrType::Form::Default;
  a.type = "Any";
  a.value = std::move(v);
  return a;
}

schema::AttrType plain_type(std::string_view type) {
  schema::AttrType a;
  a.type = std::string(type);
  return a;
}

// `attrs`: how many attributes the port will have (2 with a default), to size the vector once.
schema::PortSchema make_port(std::string_view name, std::string_view type, schema::Arity arity, size_t attrs = 1) {
  schema::PortSchema p;
  p.attrs.reserve(attrs);
  p.attrs.push_back({"name", constant_str(name)});
  p.arity = arity;
  p.arity_given = true;
  p.type = std::string(type);
  if (arity == schema::Arity::Variadic) p.min_arity = 0;
  return p;
}

// ---------------------------------------------------------------- writing

void write_value(const ir::Value& v, std::string& out, const std::string& where) {
  using K = ir::Value::Kind;
  switch (v.kind()) {
    case K::Null: out += "null"; return;
    case K::Bool: out += v.as_bool() ? "true" : "false"; return;
    case K::Int: out += std::to_string(v.as_int()); return;
    case K::Float: {
      double d = v.as_float();
      if (std::isnan(d)) {
        out += "nan";
        return;
      }
      if (std::isinf(d)) {
        out += d < 0 ? "-inf" : "inf";
        return;
      }
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest form that reads back exactly
      std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
      out += s;
      if (s.find_first_of(".e") == std::string_view::npos) out += ".0";  // 1 -> 1.0: not an int
      return;
    }
    case K::String:
      out += '"';
      for (unsigned char c : v.as_string()) {
        switch (c) {
          case '\\': out += "\\\\"; break;
          case '"': out += "\\\""; break;
          case '\n': out += "\\n"; break;
          case '\r': out += "\\r"; break;
          case '\t': out += "\\t"; break;
          default:
            if (c < 0x20 || c == 0x7f) {
              char hex[8];
              std::snprintf(hex, sizeof hex, "\\x%02x", c);
              out += hex;
            } else {
              out += static_cast<char>(c);
            }
        }
      }
      out += '"';
      return;
    case K::List: {
      out += '[';
      bool first = true;
      for (const auto& x : v.as_list()) {
        if (!first) out += ',';
        first = false;
        write_value(x, out, where);
      }
      out += ']';
      return;
    }
    default:
      throw Error(where + ": a default of kind " + std::string(ir::kind_name(v.kind())) +
                  " cannot be written in the .ops form");
  }
}

// A field of a line: no tab, no line break.
void write_field(std::string_view s, std::string& out, const std::string& where) {
  if (s.find_first_of("\t\n\r") != std::string_view::npos)
    throw Error(where + ": '" + std::string(s) + "' holds a tab or a line break, which the .ops form cannot carry");
  out += s;
}

void write_port(const schema::PortSchema& p, const char* tag, std::string& out, const std::string& where) {
  // Rebuild the port from what a line carries and require it to equal the original.
  std::optional<std::string> name = p.expected_name();
  if (!name || p.attrs.empty() || p.attrs[0].name != "name") throw Error(where + ": a port without a constant name");
  const schema::AttrSchema* def = p.attrs.size() > 1 ? &p.attrs[1] : nullptr;
  schema::PortSchema rebuilt = make_port(*name, p.type, p.arity);
  if (def) rebuilt.attrs.push_back({"default", default_any(def->type.value)});
  if (!(rebuilt == p) || !p.arity_given)
    throw Error(where + ": port '" + *name +
                "' is not of the shape the .ops form carries (a constant name, a type, an arity, a default)");
  out += tag;
  out += '\t';
  out += p.arity == schema::Arity::Single ? '1' : p.arity == schema::Arity::Optional ? '?' : '*';
  out += '\t';
  write_field(*name, out, where);
  out += '\t';
  write_field(p.type, out, where);
  if (def) {
    out += '\t';
    write_value(def->type.value, out, where + ", port " + *name);
  }
  out += '\n';
}

// ---------------------------------------------------------------- reading

// The .ops lines on the shared compact reader: op lines carry the type and domain, attribute lines
// a plain type, port lines an arity, a name, a type and maybe a default value.
class Reader final : public schema::CompactReader {
 public:
  using CompactReader::CompactReader;

 private:
  std::string_view magic() const override { return kMagic; }
  std::string_view file_kind() const override { return "an .ops"; }
  size_t max_fields() const override { return 5; }
  size_t op_fields() const override { return 3; }
  std::string_view op_usage() const override { return "op<TAB>TYPE<TAB>DOMAIN"; }
  void begin(schema::NamespaceSchema& ns) override {
    size_t ops = std::count(text_.begin(), text_.end(), '\n') / 4;  // an upper estimate: an op has some 5 lines
    ns.ops.reserve(ops);
    ns.by_type.reserve(ops);
  }
  void on_op(schema::OpSchema& op, const std::string_view* f, std::string_view rest) override {
    op.domain = std::string(f[2]);
    reserve(op, rest);
  }
  bool member(std::string_view tag, const std::string_view* f, size_t n, schema::OpSchema& op) override {
    if (tag == "attr") {
      if (n != 3 || f[1].empty()) fail("expected 'attr<TAB>NAME<TAB>TYPE'");
      if (op.attr(f[1])) fail("attribute '" + std::string(f[1]) + "' given twice");
      op.attrs.push_back({std::string(f[1]), plain_type(f[2])});
      return true;
    }
    if (tag != "in" && tag != "out") return false;
    if (n != 4 && n != 5) fail("expected '" + std::string(tag) + "<TAB>ARITY<TAB>NAME<TAB>TYPE[<TAB>DEFAULT]'");
    schema::Arity a;
    if (f[1] == "1")
      a = schema::Arity::Single;
    else if (f[1] == "?")
      a = schema::Arity::Optional;
    else if (f[1] == "*")
      a = schema::Arity::Variadic;
    else
      fail("bad arity '" + std::string(f[1]) + "' (1, ? or *)");
    schema::PortSchema p = make_port(f[2], f[3], a, n == 5 ? 2 : 1);
    if (n == 5) {
      std::string_view rest = f[4];
      ir::Value v = value(rest);
      if (!rest.empty()) fail("unexpected '" + std::string(rest) + "' after a default value");
      p.attrs.push_back({"default", default_any(std::move(v))});
    }
    (tag == "in" ? op.inputs : op.outputs).push_back(std::move(p));
    return true;
  }

  // Reads one value from the front of `s` and removes it.
  ir::Value value(std::string_view& s, int depth = 0) {
    if (s.empty()) fail("a default value is missing");
    char c = s[0];
    if (c == '[') {
      if (depth == 64) fail("lists nest too deeply");
      s.remove_prefix(1);
      ir::Value::List l;
      if (!s.empty() && s[0] == ']') {
        s.remove_prefix(1);
        return ir::Value(std::move(l));
      }
      while (true) {
        l.push_back(value(s, depth + 1));
        if (s.empty()) fail("a list is not closed with ']'");
        if (s[0] == ']') {
          s.remove_prefix(1);
          return ir::Value(std::move(l));
        }
        if (s[0] != ',') fail(std::string("expected ',' or ']' in a list, found '") + s[0] + "'");
        s.remove_prefix(1);
      }
    }
    if (c == '"') return string(s);
    size_t e = s.find_first_of(",]");
    std::string_view tok = s.substr(0, e);
    s.remove_prefix(tok.size());
    if (tok == "null") return ir::Value();
    if (tok == "true") return ir::Value(true);
    if (tok == "false") return ir::Value(false);
    const char* end = tok.data() + tok.size();
    if (tok.find_first_of(".eEn") != std::string_view::npos) {  // a float (n: inf, nan)
      double d = 0;
      auto r = std::from_chars(tok.data(), end, d);
      if (r.ec != std::errc() || r.ptr != end) fail("bad float '" + std::string(tok) + "'");
      return ir::Value(d);
    }
    int64_t i = 0;
    auto r = std::from_chars(tok.data(), end, i);
    if (tok.empty() || r.ec != std::errc() || r.ptr != end) fail("bad value '" + std::string(tok) + "'");
    return ir::Value(i);
  }

  ir::Value string(std::string_view& s) {
    std::string out;
    size_t i = 1;
    while (true) {
      if (i >= s.size()) fail("a string is not closed with '\"'");
      char c = s[i++];
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) fail("a string ends in '\\'");
      char x = s[i++];
      switch (x) {
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'x': {
          unsigned v = 0;
          auto r = std::from_chars(s.data() + i, s.data() + std::min(i + 2, s.size()), v, 16);
          if (r.ec != std::errc() || r.ptr != s.data() + i + 2) fail("bad \\x escape in a string");
          out += static_cast<char>(v);
          i += 2;
          break;
        }
        default: fail(std::string("unknown escape '\\") + x + "' in a string");
      }
    }
    s.remove_prefix(i);
    return ir::Value(std::move(out));
  }

  // Sizes the op's vectors from its lines (up to the next op line in `rest`): ports are large and
  // growing the vectors would move them again and again.
  static void reserve(schema::OpSchema& op, std::string_view rest) {
    size_t attrs = 0, ins = 0, outs = 0;
    while (!rest.empty() && rest.substr(0, 3) != "op\t") {
      attrs += rest[0] == 'a';
      ins += rest[0] == 'i';
      outs += rest[0] == 'o';
      size_t nl = rest.find('\n');
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    }
    op.attrs.reserve(attrs);
    op.inputs.reserve(ins);
    op.outputs.reserve(outs);
  }
};

}  // namespace

std::string write_namespace_file(const schema::NamespaceSchema& ns) {
  std::string out;
  out.reserve(ns.ops.size() * 128);
  out += kMagic;
  out += "\nnamespace\t";
  write_field(ns.name, out, "namespace " + ns.name);
  out += '\t';
  write_field(ns.type_system, out, "namespace " + ns.name);
  out += '\n';
  for (const auto& op : ns.ops) {
    std::string where = "namespace " + ns.name + ", op " + op->type;
    if (op->ops || op->edges || op->since_version || op->deprecated || !op->type_constraints.empty())
      throw Error(where + ": composite ops, since_version, deprecated and type constraints cannot be written in the "
                          ".ops form");
    if (op->declared_in != ns.name) throw Error(where + ": declared in another namespace (" + op->declared_in + ")");
    out += "op\t";
    write_field(op->type, out, where);
    out += '\t';
    write_field(op->domain, out, where);
    out += '\n';
    for (const auto& a : op->attrs) {
      if (!(a.type == plain_type(a.type.type)) || a.type.type.empty())
        throw Error(where + ": attribute '" + a.name + "' is not a plain type, which the .ops form cannot carry");
      out += "attr\t";
      write_field(a.name, out, where);
      out += '\t';
      write_field(a.type.type, out, where);
      out += '\n';
    }
    for (const auto& p : op->inputs) write_port(p, "in", out, where);
    for (const auto& p : op->outputs) write_port(p, "out", out, where);
  }
  return out;
}

std::unique_ptr<schema::NamespaceSchema> read_namespace_file(std::string_view text, const std::string& path,
                                                             const schema::TypeSystems& types) {
  auto ns = Reader(text, path).run();
  try {
    schema::compile_types(*ns, types);
  } catch (const Error& e) {
    throw Error(path + ": error: " + e.what());
  }
  return ns;
}

}  // namespace amanda::torchscript
