// check_table: a table against the schemas of its two namespaces.
#include <set>

#include <fmt/format.h>

#include "amanda/mapping/table.h"
#include "compact_pattern.h"

namespace amanda::mapping {

namespace {

struct Checker {
  const Table& t;
  schema::Registry& reg;
  Diagnostics& out;

  void error(const SourceLoc& loc, const Rule& r, const std::string& msg) { out.error(loc.str(), "rule '" + r.name + "': " + msg); }

  static bool port_name_ok(const schema::OpSchema& s, bool input, const std::string& name) {
    const auto& list = input ? s.inputs : s.outputs;
    if (name.starts_with("@")) return true;
    for (const auto& p : list) {
      auto n = p.expected_name();
      if (!n) return true;  // the schema does not fix port names
      if (*n == name) return true;
      if (p.arity == schema::Arity::Variadic && name.size() > n->size() + 1 && name.compare(0, n->size() + 1, *n + ".") == 0) return true;
    }
    return false;
  }
  static std::string port_names(const schema::OpSchema& s, bool input) {
    std::string r;
    for (const auto& p : input ? s.inputs : s.outputs)
      if (auto n = p.expected_name()) r += (r.empty() ? "" : ", ") + *n;
    return r.empty() ? "none" : r;
  }

  const schema::OpSchema* op_schema(const std::string& ns, const OpSpec& o, const Rule& r, const char* side) {
    const schema::OpSchema* s = nullptr;
    try {
      s = resolve_op(reg, t, ns, o.type);
    } catch (const std::exception& e) {
      error(o.loc, r, e.what());
      return nullptr;
    }
    if (!s) error(o.loc, r, fmt::format("{} op type '{}' is not in namespace {}", side, o.type, ns));
    return s;
  }

  void check_ops(const std::string& ns, const Pattern& p, const Rule& r, bool is_src, std::set<std::string>& captured,
                 const Pattern* src = nullptr, const std::vector<const schema::OpSchema*>* src_schemas = nullptr) {
    const char* side = is_src ? "matcher" : "mapper";
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const OpSpec& o = p.ops[i];
      const schema::OpSchema* s = op_schema(ns, o, r, side);
      if (is_src) {
        if (o.name) capture(*o.name, captured);
      } else if (o.name) {
        uses(*o.name, captured, o.loc, r);
      }
      for (const AttrSpec& a : o.attrs) {
        if (s && !a.name.starts_with("@") && !s->attr(a.name))
          error(a.loc, r, fmt::format("{} '{}' has no attribute '{}' in {}", side, o.type, a.name, ns));
        if (!a.expr) continue;
        if (is_src) capture(*a.expr, captured);
        else uses(*a.expr, captured, a.loc, r);
      }
      for (bool input : {true, false}) {
        for (const PortSpec& ps : input ? o.inputs : o.outputs) {
          if (ps.name && ps.name->kind == Expr::Kind::Literal && ps.name->literal.is_string() && s &&
              !port_name_ok(*s, input, ps.name->literal.as_string()))
            error(ps.loc, r, fmt::format("{} '{}' has no {} port '{}' in {} (it has: {})", side, o.type, input ? "input" : "output",
                                         ps.name->literal.as_string(), ns, port_names(*s, input)));
          if (is_src) {
            if (!ps.ref.empty()) captured.insert(ps.ref);
            if (ps.variadic)  // its ports, as a template expanded with sample lengths reads them
              for (int64_t k = 0; k < kSampleListLength; ++k) captured.insert(ps.ref + "[" + std::to_string(k) + "]");
            if (ps.name && ps.name->kind == Expr::Kind::Ref) captured.insert(ps.name->name);
            if (ps.value) capture(*ps.value, captured);
            for (const AttrSpec& a : ps.attrs)
              if (a.expr) capture(*a.expr, captured);
          } else {
            if (!ps.ref.empty() && !captured.contains(ps.ref))
              error(ps.loc, r, "the mapper links port ref '" + ps.ref + "', which the matcher does not capture");
            if (ps.name) uses(*ps.name, captured, ps.loc, r);
            if (ps.value) {
              uses(*ps.value, captured, ps.loc, r);
              if (!reg.resolve(ns, t.constant.type))
                error(ps.loc, r, fmt::format("const: needs the constant op '{}' in {} (set the table's constant:)", t.constant.type, ns));
            }
            for (const AttrSpec& a : ps.attrs)
              if (a.expr) uses(*a.expr, captured, a.loc, r);
          }
        }
      }
      // A mapper op must validate: every required attribute given, or carried over from the matched op.
      if (!is_src && s) {
        bool carry = t.carry_attrs && src && src->ops.size() == 1 && src_schemas && (*src_schemas)[0];
        for (const auto& as : s->attrs) {
          if (!as.type.required() || as.name == "name") continue;  // the op's name (builtin)
          bool given = false;
          for (const AttrSpec& a : o.attrs)
            if (a.name == as.name && a.expr) given = true;
          if (!given && carry && (*src_schemas)[0]->attr(as.name)) given = true;
          if (!given)
            error(o.loc, r, fmt::format("the mapper's '{}' does not validate in {}: attribute '{}' is required", o.type, ns, as.name));
        }
      }
    }
  }

  void capture(const Expr& e, std::set<std::string>& captured) {
    std::vector<std::string> refs;
    e.refs(refs);
    captured.insert(refs.begin(), refs.end());
  }

  void uses(const Expr& e, const std::set<std::string>& captured, const SourceLoc& loc, const Rule& r) {
    std::vector<std::string> refs;
    e.refs(refs);
    for (const auto& x : refs)
      if (!captured.contains(x)) error(loc, r, "'" + e.str() + "' uses ref '" + x + "', which the matcher does not capture");
  }

  void run() {
    if (!reg.known(t.src)) out.error(t.loc.str(), "unknown src namespace " + t.src);
    if (!reg.known(t.dst)) out.error(t.loc.str(), "unknown dst namespace " + t.dst);
    if (out.has_errors()) return;
    for (const Rule& r : t.rules) {
      std::set<std::string> captured;
      check_ops(t.src, r.src, r, true, captured);
      if (r.when) uses(*r.when, captured, r.loc, r);
      if (r.unsupported) continue;
      std::vector<const schema::OpSchema*> ss;
      for (const OpSpec& o : r.src.ops) ss.push_back(resolve_op(reg, t, t.src, o.type));
      check_ops(t.dst, r.dst, r, false, captured, &r.src, &ss);
    }
  }
};

}  // namespace

void check_table(const Table& t, schema::Registry& reg, Diagnostics& out) { Checker{t, reg, out}.run(); }

}  // namespace amanda::mapping
