#include "amanda/schema/validate.h"

#include <absl/container/flat_hash_map.h>

namespace amanda::schema {

using ir::OpId;
using ir::PortDir;
using ir::PortId;
using ir::Value;

namespace {

std::string show(const Value& v, int depth = 0) {
  switch (v.kind()) {
    case Value::Kind::Null: return "null";
    case Value::Kind::Bool: return v.as_bool() ? "true" : "false";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: {
      std::string s = std::to_string(v.as_float());
      return s;
    }
    case Value::Kind::String: return "'" + v.as_string() + "'";
    case Value::Kind::List: {
      if (depth > 2) return "[...]";
      std::string s = "[";
      size_t n = 0;
      for (const auto& x : v.as_list()) {
        if (n) s += ", ";
        if (++n > 8) {
          s += "...";
          break;
        }
        s += show(x, depth + 1);
      }
      return s + "]";
    }
    case Value::Kind::Map: return "{...}";
    case Value::Kind::Tensor: return "a tensor";
    case Value::Kind::Graph: return "a graph";
  }
  return "?";
}

std::string describe(const AttrType& at) {
  switch (at.form) {
    case AttrType::Form::Type:
    case AttrType::Form::Default: return at.type;
    case AttrType::Form::Constant: return at.type + " constant " + show(at.value);
    case AttrType::Form::OneOf: {
      std::string s = "one of (";
      for (size_t i = 0; i < at.options.size(); ++i) {
        if (i) s += ", ";
        if (i >= 6) {
          s += "...";
          break;
        }
        const auto& o = at.options[i];
        s += o.form == AttrType::Form::Constant ? show(o.value) : describe(o);
      }
      return s + ")";
    }
  }
  return "?";
}

class Validator {
 public:
  Validator(ir::Graph& g, Registry& reg, Diagnostics& diags, const ValidateOptions& opt)
      : g_(g), reg_(reg), diags_(diags), opt_(opt), name_sym_(g.sym("name")), type_sym_(g.sym("type")),
        imports_sym_(g.sym("imports")) {}

  ValidationResult run() {
    struct Item {
      OpId scope;
      Symbol ns;
      const Value* imports;
    };
    std::vector<Item> stack;
    Symbol root_ns = opt_.namespace_override.empty() ? g_.graph_namespace(g_.root()) : g_.sym(opt_.namespace_override);
    if (g_.root_kind() == ir::Graph::RootKind::Op) root_ns = opt_.namespace_override.empty() ? 0 : g_.sym(opt_.namespace_override);
    if (g_.root_kind() == ir::Graph::RootKind::Op && root_ns) check_op(g_.root(), root_ns, nullptr);
    stack.push_back({g_.root(), root_ns, g_.attr(g_.root(), imports_sym_)});
    while (!stack.empty()) {
      Item it = stack.back();
      stack.pop_back();
      if (it.ns && !namespace_known(it.ns, it.scope)) continue;
      for (OpId c = g_.first_child(it.scope); c; c = g_.next_sibling(c)) {
        if (it.ns) check_op(c, it.ns, it.imports);
        if (g_.has_body(c)) stack.push_back({c, it.ns, it.imports});
        for (OpId ag : g_.attr_graphs(c)) {
          Symbol ns = g_.graph_namespace(ag) ? g_.graph_namespace(ag) : it.ns;
          const Value* imp = g_.attr(ag, imports_sym_);
          stack.push_back({ag, ns, imp ? imp : it.imports});
        }
      }
    }
    return res_;
  }

 private:
  bool namespace_known(Symbol ns, OpId where) {
    auto it = known_.find(ns);
    if (it != known_.end()) return it->second;
    std::string name(g_.str(ns));
    bool ok = reg_.known(name);
    if (!ok) {
      diags_.error(g_.path(where), "unknown namespace '" + name + "' (see `amanda schema list`; add a schema with --schema FILE)");
      ++res_.problems;
    }
    known_[ns] = ok;
    return ok;
  }

  void problem(const std::string& key, const std::string& where, const std::string& msg) {
    ++res_.problems;
    auto& s = res_.by_type[key];
    if (++s.problems <= opt_.max_problems_per_type) diags_.error(where, msg);
  }

  // Schema lookup, cached by (namespace, type).
  const OpSchema* schema_for(Symbol ns, Symbol type, const Value* imports, std::string& ns_name, std::string& type_name) {
    uint64_t key = (uint64_t(ns) << 32) | type;
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ns_name = it->second.ns;
      type_name = it->second.type;
      return it->second.schema;
    }
    ns_name = std::string(g_.str(ns));
    type_name = std::string(g_.str(type));
    if (imports && imports->is_map()) {
      size_t p = type_name.rfind("::");
      if (p != std::string::npos) {
        if (const Value* target = imports->find(type_name.substr(0, p)); target && target->is_string()) {
          ns_name = target->as_string();
          type_name = type_name.substr(p + 2);
        }
      }
    }
    const OpSchema* s = nullptr;
    if (reg_.known(ns_name) || !reg_.list(ns_name).empty() || true) s = reg_.resolve(ns_name, type_name);
    if (!s && !reg_.known(ns_name) && ns_name != g_.str(ns)) {
      // An imported namespace that nobody knows (a custom ONNX domain): say so once per op type.
      unknown_import_.emplace(key, true);
    }
    cache_[key] = {s, ns_name, type_name};
    return s;
  }

  std::string check_value(const Value& v, const AttrType& at, const TypeSystem& ts) {
    switch (at.form) {
      case AttrType::Form::Type:
      case AttrType::Form::Default:
        if (!at.compiled || ts.is_instance(v, *at.compiled)) return {};
        return "wrong type: " + show(v) + " is not of type '" + at.type + "'";
      case AttrType::Form::Constant:
        if (at.compiled && !ts.is_instance(v, *at.compiled)) return "wrong type: " + show(v) + " is not of type '" + at.type + "'";
        if (!ts.equal(v, at.value, *at.compiled)) return "constant mismatch: must be " + show(at.value) + ", found " + show(v);
        return {};
      case AttrType::Form::OneOf:
        for (const auto& o : at.options)
          if (check_value(v, o, ts).empty()) return {};
        return "one_of mismatch: " + show(v) + " is not " + describe(at);
    }
    return {};
  }

  void check_attrs(const ir::AttrList& attrs, const std::vector<AttrSchema>& schema, const TypeSystem& ts,
                   const std::string& key, const std::string& where, const std::string& what,
                   const std::function<void(Symbol, Value)>& fill, const std::function<void(Symbol)>& drop) {
    for (const auto& [k, v] : attrs) {
      std::string_view name = g_.str(k);
      const AttrSchema* as = nullptr;
      for (const auto& a : schema)
        if (a.name == name) as = &a;
      if (!as) {
        problem(key, where, "unknown attribute '" + std::string(name) + "' on " + what);
        continue;
      }
      std::string err = check_value(v, as->type, ts);
      if (!err.empty()) problem(key, where, "attribute '" + std::string(name) + "': " + err);
    }
    for (const auto& a : schema) {
      if (a.name == "name" || a.name == "type") continue;  // builtins: optional, checked separately
      Symbol k = g_.sym(a.name);
      const Value* present = nullptr;
      for (const auto& [ak, av] : attrs)
        if (ak == k) present = &av;
      const Value* def = a.type.default_value();
      if (!present) {
        if (def && opt_.fill_defaults && fill) {
          fill(k, *def);
          ++res_.filled;
        } else if (a.type.required()) {
          problem(key, where, "missing attribute '" + a.name + "' (" + describe(a.type) + ") required on " + what);
        }
      } else if (def && opt_.drop_defaults && drop && ts.equal(*present, *def, a.type.compiled ? *a.type.compiled : Type{})) {
        drop(k);
        ++res_.dropped;
      }
    }
  }

  void check_builtin(const std::vector<AttrSchema>& schema, std::string_view builtin, std::string_view value,
                     const TypeSystem& ts, const std::string& key, const std::string& where) {
    for (const auto& a : schema)
      if (a.name == builtin) {
        std::string err = check_value(Value(std::string(value)), a.type, ts);
        if (!err.empty()) problem(key, where, "builtin '" + std::string(builtin) + "': " + err);
      }
  }

  void check_ports(OpId op, PortDir dir, const std::vector<PortSchema>& schema, const TypeSystem& ts,
                   const std::string& key, const std::string& type_name) {
    auto ps = g_.ports(op, dir);
    const char* side = dir == PortDir::In ? "input" : "output";
    size_t i = 0, n = ps.size();
    size_t max_allowed = 0;
    bool unbounded = false;
    for (size_t si = 0; si < schema.size(); ++si) {
      const PortSchema& s = schema[si];
      auto expected = s.expected_name();
      auto check_one = [&](PortId p, bool variadic) {
        std::string pname(g_.port_name_str(p));
        if (expected && pname != *expected) {
          bool ok = false;
          if (variadic && pname.size() > expected->size() + 1 && pname.compare(0, expected->size(), *expected) == 0 &&
              pname[expected->size()] == '.')
            ok = std::all_of(pname.begin() + static_cast<long>(expected->size()) + 1, pname.end(),
                             [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
          if (!ok)
            problem(key, g_.path(p), std::string("wrong port name: ") + side + " port #" + std::to_string(g_.port_index(p)) +
                                         " of " + type_name + " is named '" + pname + "', the schema says '" + *expected + "'");
        }
        check_attrs(g_.attrs(p), s.attrs, ts, key, g_.path(p), std::string(side) + " port '" + pname + "' of " + type_name,
                    [&](Symbol k, Value v) { g_.set_attr(p, k, std::move(v)); }, [&](Symbol k) { g_.erase_attr(p, k); });
        if (!expected) check_builtin(s.attrs, "name", pname, ts, key, g_.path(p));
      };
      switch (s.arity) {
        case Arity::Single:
          ++max_allowed;
          if (i >= n) {
            problem(key, g_.path(op), std::string("missing ") + side + " port #" + std::to_string(si) +
                                          (expected ? " '" + *expected + "'" : std::string()) + " that " + type_name + " requires");
          } else {
            check_one(ps[i++], false);
          }
          break;
        case Arity::Optional:
          ++max_allowed;
          if (i < n) check_one(ps[i++], false);
          break;
        case Arity::Variadic: {
          unbounded = true;
          size_t count = n - i;
          if (count < s.min_arity)
            problem(key, g_.path(op), std::string("too few ") + side + " ports: " + type_name + " needs at least " +
                                          std::to_string(s.min_arity) + " for variadic '" + expected.value_or("?") + "', found " +
                                          std::to_string(count));
          while (i < n) check_one(ps[i++], true);
          break;
        }
      }
    }
    if (i < n && !unbounded)
      problem(key, g_.path(op), std::string("too many ") + side + " ports: " + type_name + " has " + std::to_string(n) +
                                    ", the schema allows at most " + std::to_string(max_allowed));
  }

  void check_op(OpId op, Symbol ns, const Value* imports) {
    ++res_.ops_checked;
    std::string ns_name, type_name;
    const OpSchema* s = schema_for(ns, g_.type(op), imports, ns_name, type_name);
    std::string key = ns_name + " " + type_name;
    auto& summary = res_.by_type[key];
    ++summary.ops;
    if (!s) {
      if (!reg_.known(ns_name) && split_version(ns_name).second.empty() == false && !reg_.known(ns_name))
        problem(key, g_.path(op), "op type '" + type_name + "' is in namespace '" + ns_name + "', which is unknown");
      else
        problem(key, g_.path(op), "unknown op type '" + type_name + "' in namespace " + ns_name);
      return;
    }
    const NamespaceSchema* nsch = reg_.find(s->declared_in);
    const TypeSystem* ts = nsch ? nsch->types : nullptr;
    if (!ts) return;
    if (s->deprecated) problem(key, g_.path(op), "op type '" + type_name + "' is deprecated in " + ns_name);
    check_attrs(g_.attrs(op), s->attrs, *ts, key, g_.path(op), "op type " + type_name,
                [&](Symbol k, Value v) { g_.set_attr(op, k, std::move(v)); }, [&](Symbol k) { g_.erase_attr(op, k); });
    check_builtin(s->attrs, "name", g_.name_str(op), *ts, key, g_.path(op));
    check_ports(op, PortDir::In, s->inputs, *ts, key, type_name);
    check_ports(op, PortDir::Out, s->outputs, *ts, key, type_name);
  }

  struct Cached {
    const OpSchema* schema;
    std::string ns, type;
  };

  ir::Graph& g_;
  Registry& reg_;
  Diagnostics& diags_;
  const ValidateOptions& opt_;
  Symbol name_sym_, type_sym_, imports_sym_;
  ValidationResult res_;
  absl::flat_hash_map<uint64_t, Cached> cache_;
  absl::flat_hash_map<uint64_t, bool> unknown_import_;
  absl::flat_hash_map<Symbol, bool> known_;
};

}  // namespace

ValidationResult validate(ir::Graph& g, Registry& registry, Diagnostics& diags, const ValidateOptions& options) {
  return Validator(g, registry, diags, options).run();
}

}  // namespace amanda::schema
