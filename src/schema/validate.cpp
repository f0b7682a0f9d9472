#include "amanda/schema/validate.h"

#include <algorithm>
#include <charconv>
#include <deque>

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
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, v.as_float());  // shortest round trip
      std::string s(buf, r.ptr);
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 1.0, not 1
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
      // Every distinct option (the seed's MatMul lists complex64 twice), up to a screenful.
      std::vector<std::string> seen;
      for (const auto& o : at.options) {
        std::string d = o.form == AttrType::Form::Constant ? show(o.value) : describe(o);
        if (std::find(seen.begin(), seen.end(), d) == seen.end()) seen.push_back(std::move(d));
      }
      std::string s = "one of (";
      for (size_t i = 0; i < seen.size(); ++i) {
        if (i) s += ", ";
        if (i >= 24) {
          s += "... " + std::to_string(seen.size() - i) + " more";
          break;
        }
        s += seen[i];
      }
      return s + ")";
    }
  }
  return "?";
}

// What an attribute must be, for "missing attribute" messages: "of type 'int'", "one of (...)".
std::string expected(const AttrType& at) {
  return at.form == AttrType::Form::OneOf ? describe(at) : "of type '" + at.type + "'";
}

// A schema attribute as the validator uses it: its name as a symbol of the graph at hand.
struct PlanAttr {
  const AttrSchema* schema;
  Symbol sym;
  bool builtin;  // "name" (and an op's "type"): not an attribute in the graph; never missing
};

struct PlanPort {
  const PortSchema* schema;
  std::optional<std::string> expected;  // the name the port must have
  Symbol expected_sym = 0;
  std::vector<PlanAttr> attrs;
  const AttrSchema* name_attr = nullptr;  // checked against the port's name when no name is expected
};

// Everything check_op needs for one (namespace, op type, imports), computed once.
struct Plan {
  const OpSchema* schema = nullptr;
  const TypeSystem* ts = nullptr;
  std::string ns, type;             // after following imports
  std::string import_prefix;        // "ai.onnx.ml" of "ai.onnx.ml::LabelEncoder", when imported
  bool namespace_unknown = false;   // an import to a namespace nobody knows
  OpTypeSummary* summary = nullptr;
  std::string key;
  std::vector<PlanAttr> attrs;
  std::vector<PlanPort> inputs, outputs;
  const AttrSchema* name_attr = nullptr;
  bool name_trivially_ok = true;
};

struct PlanKey {
  Symbol ns, type;
  const Value* imports;
  bool operator==(const PlanKey& o) const { return ns == o.ns && type == o.type && imports == o.imports; }
  template <typename H>
  friend H AbslHashValue(H h, const PlanKey& k) {
    return H::combine(std::move(h), k.ns, k.type, k.imports);
  }
};

class Validator {
 public:
  Validator(ir::Graph& g, Registry& reg, Diagnostics& diags, const ValidateOptions& opt)
      : g_(g), reg_(reg), diags_(diags), opt_(opt), imports_sym_(g.sym("imports")) {}

  ValidationResult run() {
    struct Item {
      OpId scope;
      Symbol ns;
      const Value* imports;
    };
    std::vector<Item> queue;
    const bool op_root = g_.root_kind() == ir::Graph::RootKind::Op;
    Symbol override_ns = opt_.namespace_override.empty() ? 0 : g_.sym(opt_.namespace_override);
    // A graph document names its namespace; an op document has none of its own (--namespace).
    Symbol root_ns = override_ns ? override_ns : op_root ? 0 : g_.graph_namespace(g_.root());
    if (op_root && root_ns && namespace_known(root_ns, g_.root())) check_op(g_.root(), root_ns, nullptr);
    // Read after the root op's check, which may add defaults to its attribute list. Attribute
    // lists of graph nodes are never changed here, so the pointers stay valid.
    const Value* root_imports = g_.attr(g_.root(), imports_sym_);
    queue.push_back({g_.root(), root_ns, root_imports});
    if (op_root) push_attr_graphs(queue, g_.root(), root_ns, root_imports);
    // Breadth first, in document order: the top-level ops' problems, then those of the bodies
    // and attribute graphs they hold.
    for (size_t next = 0; next < queue.size(); ++next) {
      Item it = queue[next];
      if (it.ns && !namespace_known(it.ns, it.scope)) continue;
      for (OpId c = g_.first_child(it.scope); c; c = g_.next_sibling(c)) {
        if (it.ns) check_op(c, it.ns, it.imports);
        if (g_.has_body(c)) queue.push_back({c, it.ns, it.imports});
        push_attr_graphs(queue, c, it.ns, it.imports);
      }
    }
    return res_;
  }

 private:
  template <class Queue>
  void push_attr_graphs(Queue& queue, OpId op, Symbol ns, const Value* imports) {
    for (OpId ag : g_.attr_graphs(op)) {
      Symbol own = g_.graph_namespace(ag);
      const Value* imp = g_.attr(ag, imports_sym_);
      queue.push_back({ag, own ? own : ns, imp ? imp : imports});
    }
  }

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

  void problem(Plan& p, const std::string& where, const std::string& msg) {
    ++res_.problems;
    if (++p.summary->problems <= opt_.max_problems_per_type) diags_.error(where, msg);
  }

  std::vector<PlanAttr> plan_attrs(const std::vector<AttrSchema>& attrs, bool op_level) {
    std::vector<PlanAttr> out;
    out.reserve(attrs.size());
    for (const auto& a : attrs)
      out.push_back({&a, g_.sym(a.name), a.name == "name" || (op_level && a.name == "type")});
    return out;
  }

  std::vector<PlanPort> plan_ports(const std::vector<PortSchema>& ports) {
    std::vector<PlanPort> out;
    for (const auto& p : ports) {
      PlanPort pp;
      pp.schema = &p;
      pp.expected = p.expected_name();
      if (pp.expected) pp.expected_sym = g_.sym(*pp.expected);
      pp.attrs = plan_attrs(p.attrs, false);
      pp.name_attr = p.attr("name");
      out.push_back(std::move(pp));
    }
    return out;
  }

  bool name_check_trivial(const AttrSchema* a) const {
    if (!a) return true;
    if (a->type.form != AttrType::Form::Type && a->type.form != AttrType::Form::Default) return false;
    return a->type.compiled && (a->type.compiled->kind == Type::Kind::String || a->type.compiled->kind == Type::Kind::Any);
  }

  Plan& plan_for(Symbol ns, Symbol type, const Value* imports) {
    PlanKey key{ns, type, imports};
    auto it = plans_.find(key);
    if (it != plans_.end()) return *it->second;
    Plan& p = storage_.emplace_back();
    plans_[key] = &p;
    p.ns = std::string(g_.str(ns));
    p.type = std::string(g_.str(type));
    if (imports && imports->is_map()) {
      size_t sep = p.type.rfind("::");
      if (sep != std::string::npos) {
        std::string prefix = p.type.substr(0, sep);
        if (const Value* target = imports->find(prefix); target && target->is_string()) {
          p.import_prefix = prefix;
          p.ns = target->as_string();
          p.type = p.type.substr(sep + 2);
          p.namespace_unknown = !reg_.known(p.ns);
        }
      }
    }
    p.key = p.ns + " " + p.type;
    p.summary = &res_.by_type[p.key];
    if (p.namespace_unknown) return p;
    p.schema = reg_.resolve(p.ns, p.type);
    if (!p.schema) return p;
    if (const NamespaceSchema* decl = reg_.find(p.schema->declared_in)) p.ts = decl->types;
    p.attrs = plan_attrs(p.schema->attrs, true);
    p.inputs = plan_ports(p.schema->inputs);
    p.outputs = plan_ports(p.schema->outputs);
    p.name_attr = p.schema->attr("name");
    p.name_trivially_ok = name_check_trivial(p.name_attr);
    for (auto& pp : p.inputs) pp.name_attr = name_check_trivial(pp.name_attr) ? nullptr : pp.name_attr;
    for (auto& pp : p.outputs) pp.name_attr = name_check_trivial(pp.name_attr) ? nullptr : pp.name_attr;
    return p;
  }

  std::string check_value(const Value& v, const AttrType& at, const TypeSystem& ts) {
    switch (at.form) {
      case AttrType::Form::Type:
      case AttrType::Form::Default:
        if (!at.compiled || ts.is_instance(v, *at.compiled)) return {};
        return "wrong type: " + show(v) + " is not of type '" + at.type + "'";
      case AttrType::Form::Constant:
        if (at.compiled && !ts.is_instance(v, *at.compiled)) return "wrong type: " + show(v) + " is not of type '" + at.type + "'";
        if (!ts.equal(v, at.value, at.compiled ? *at.compiled : any_)) return "constant mismatch: must be " + show(at.value) + ", found " + show(v);
        return {};
      case AttrType::Form::OneOf:
        for (const auto& o : at.options)
          if (value_ok(v, o, ts)) return {};
        return "one_of mismatch: " + show(v) + " is not " + describe(at);
    }
    return {};
  }

  // check_value without building a message (the common case: the value is fine).
  bool value_ok(const Value& v, const AttrType& at, const TypeSystem& ts) {
    switch (at.form) {
      case AttrType::Form::Type:
      case AttrType::Form::Default: return !at.compiled || ts.is_instance(v, *at.compiled);
      case AttrType::Form::Constant:
        return (!at.compiled || ts.is_instance(v, *at.compiled)) && ts.equal(v, at.value, at.compiled ? *at.compiled : any_);
      case AttrType::Form::OneOf:
        for (const auto& o : at.options)
          if (value_ok(v, o, ts)) return true;
        return false;
    }
    return true;
  }

  static std::string attr_names(const std::vector<PlanAttr>& attrs) {
    std::string s;
    size_t n = 0;
    for (const auto& a : attrs) {
      if (a.builtin) continue;
      if (n++) s += ", ";
      s += a.schema->name;
    }
    return n ? "its attributes: " + s : "it has no attributes";
  }

  // Checks the attributes of an op or a port (Entity = OpId or PortId); `what` describes the
  // entity for messages and is only called when there is something to say.
  template <class Entity, class What>
  void check_attrs(Entity e, const std::vector<PlanAttr>& schema, const TypeSystem& ts, Plan& plan, What&& what) {
    const ir::AttrList& attrs = g_.attrs(e);
    seen_.assign(schema.size(), 0);
    for (const auto& [k, v] : attrs) {
      size_t i = 0;
      while (i < schema.size() && schema[i].sym != k) ++i;
      if (i == schema.size()) {
        // Keys starting with '@' are annotations (metadata a frontend keeps, such as an ONNX
        // value name or doc_string), never attributes a schema declares.
        if (is_annotation(k)) continue;
        problem(plan, g_.path(e), "unknown attribute '" + std::string(g_.str(k)) + "' on " + what() + " (" + attr_names(schema) + ")");
        continue;
      }
      seen_[i] = 1;
      const AttrType& at = schema[i].schema->type;
      if (!value_ok(v, at, ts)) {
        problem(plan, g_.path(e), "attribute '" + schema[i].schema->name + "': " + check_value(v, at, ts));
      } else if (opt_.drop_defaults) {
        const Value* def = at.default_value();
        if (def && ts.equal(v, *def, at.compiled ? *at.compiled : any_)) pending_drop_.push_back(k);
      }
    }
    for (size_t i = 0; i < schema.size(); ++i) {
      if (seen_[i] || schema[i].builtin) continue;
      const AttrType& at = schema[i].schema->type;
      const Value* def = at.default_value();
      if (def && opt_.fill_defaults) {
        pending_fill_.push_back({schema[i].sym, def});
      } else if (at.required()) {
        problem(plan, g_.path(e), "missing attribute '" + schema[i].schema->name + "' (" + expected(at) + "), which " + what() + " requires");
      }
    }
    // Changes after the walk: set_attr/erase_attr may move the list being read.
    for (Symbol k : pending_drop_) {
      g_.erase_attr(e, k);
      ++res_.dropped;
    }
    for (const auto& [k, v] : pending_fill_) {
      g_.set_attr(e, k, *v);
      ++res_.filled;
    }
    pending_drop_.clear();
    pending_fill_.clear();
  }

  void check_name(const AttrSchema* a, std::string_view name, const TypeSystem& ts, Plan& plan, const std::string& where) {
    Value v{std::string(name)};
    if (!value_ok(v, a->type, ts)) problem(plan, where, "name '" + std::string(name) + "': " + check_value(v, a->type, ts));
  }

  bool is_annotation(Symbol k) const {
    std::string_view s = g_.str(k);
    return !s.empty() && s[0] == '@';
  }

  void check_ports(OpId op, PortDir dir, const std::vector<PlanPort>& schema, const TypeSystem& ts, Plan& plan) {
    std::span<const PortId> ps = g_.ports(op, dir);
    // Ports named '@...' are annotations too (an ONNX subgraph's explicit captures): the schema
    // does not count them.
    bool any_annotation = false;
    for (PortId p : ps) any_annotation |= is_annotation(g_.port_name(p));
    if (any_annotation) {
      annotated_ports_.clear();
      for (PortId p : ps)
        if (!is_annotation(g_.port_name(p))) annotated_ports_.push_back(p);
      ps = annotated_ports_;
    }
    const char* side = dir == PortDir::In ? "input" : "output";
    size_t i = 0, n = ps.size();
    size_t max_allowed = 0;
    bool unbounded = false;
    for (size_t si = 0; si < schema.size(); ++si) {
      const PlanPort& s = schema[si];
      auto check_one = [&](PortId p, bool variadic) {
        if (s.expected && g_.port_name(p) != s.expected_sym) {
          std::string_view pname = g_.port_name_str(p);
          const std::string& ex = *s.expected;
          bool ok = variadic && pname.size() > ex.size() + 1 && pname.substr(0, ex.size()) == ex && pname[ex.size()] == '.' &&
                    std::all_of(pname.begin() + static_cast<long>(ex.size()) + 1, pname.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
          if (!ok)
            problem(plan, g_.path(p),
                    std::string("wrong port name: ") + side + " port #" + std::to_string(g_.port_index(p)) + " of " + plan.type +
                        " is named '" + std::string(pname) + "', the schema says '" + ex + (variadic ? "' (or '" + ex + ".N')" : "'"));
        }
        check_attrs(p, s.attrs, ts, plan, [&] {
          return std::string(side) + " port '" + std::string(g_.port_name_str(p)) + "' of " + plan.type;
        });
        if (!s.expected && s.name_attr) check_name(s.name_attr, g_.port_name_str(p), ts, plan, g_.path(p));
      };
      switch (s.schema->arity) {
        case Arity::Single:
          ++max_allowed;
          if (i >= n) {
            problem(plan, g_.path(op), std::string("missing ") + side + " port #" + std::to_string(si) +
                                           (s.expected ? " '" + *s.expected + "'" : std::string()) + " that " + plan.type + " requires");
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
          // A variadic port followed by single ones (TensorFlow's ConcatV2: values..., axis)
          // leaves them their ports.
          size_t singles_after = 0;
          for (size_t sj = si + 1; sj < schema.size(); ++sj) singles_after += schema[sj].schema->arity == Arity::Single;
          size_t count = n - i > singles_after ? n - i - singles_after : 0;
          if (count < s.schema->min_arity)
            problem(plan, g_.path(op), std::string("too few ") + side + " ports: " + plan.type + " needs at least " +
                                           std::to_string(s.schema->min_arity) + " for variadic '" + s.expected.value_or("?") +
                                           "', found " + std::to_string(count));
          for (size_t end = i + count; i < end;) check_one(ps[i++], true);
          break;
        }
      }
    }
    if (i < n && !unbounded)
      problem(plan, g_.path(op), std::string("too many ") + side + " ports: " + plan.type + " has " + std::to_string(n) +
                                     " (the first extra one is '" + std::string(g_.port_name_str(ps[i])) +
                                     "'), the schema allows at most " + std::to_string(max_allowed));
  }

  void check_op(OpId op, Symbol ns, const Value* imports) {
    ++res_.ops_checked;
    Plan& p = plan_for(ns, g_.type(op), imports);
    ++p.summary->ops;
    if (!p.schema) {
      if (p.namespace_unknown)
        problem(p, g_.path(op), "op type '" + std::string(g_.type_str(op)) + "': its prefix '" + p.import_prefix +
                                    "' is imported as namespace '" + p.ns +
                                    "', which is unknown (see `amanda schema list`; add a schema with --schema FILE)");
      else
        problem(p, g_.path(op), "unknown op type '" + p.type + "' in namespace " + p.ns + earlier_versions_note(p.ns) +
                                    imports_note(p.type, imports));
      return;
    }
    if (!p.ts) return;
    if (p.schema->deprecated) problem(p, g_.path(op), "op type '" + p.type + "' is deprecated in " + p.ns);
    check_attrs(op, p.attrs, *p.ts, p, [&] { return "op type " + p.type + (p.import_prefix.empty() ? "" : " of " + p.ns); });
    if (!p.name_trivially_ok) check_name(p.name_attr, g_.name_str(op), *p.ts, p, g_.path(op));
    check_ports(op, PortDir::In, p.inputs, *p.ts, p);
    check_ports(op, PortDir::Out, p.outputs, *p.ts, p);
  }

  // "; its prefix 'x' is not one of the graph's imports (a, b)" for "x::Op" in a graph with imports.
  static std::string imports_note(const std::string& type, const Value* imports) {
    size_t sep = type.rfind("::");
    if (sep == std::string::npos || !imports || !imports->is_map()) return {};
    std::string names;
    for (const auto& e : imports->as_map()) names += (names.empty() ? "" : ", ") + e.key;
    return "; its prefix '" + type.substr(0, sep) + "' is not one of the graph's imports (" + names + ")";
  }

  // " (nor in any earlier version of amanda/onnx)" for a versioned namespace with a family.
  std::string earlier_versions_note(const std::string& ns) {
    auto [family, version] = split_version(ns);
    if (version.empty()) return {};
    for (const auto& n : reg_.list(family)) {
      auto [f, v] = split_version(n);
      if (f == family && compare_versions(v, version) < 0) return " (nor in any earlier version of " + family + ")";
    }
    return {};
  }

  ir::Graph& g_;
  Registry& reg_;
  Diagnostics& diags_;
  const ValidateOptions& opt_;
  Symbol imports_sym_;
  ValidationResult res_;
  Type any_;
  std::deque<Plan> storage_;
  absl::flat_hash_map<PlanKey, Plan*> plans_;
  absl::flat_hash_map<Symbol, bool> known_;
  std::vector<char> seen_;
  std::vector<Symbol> pending_drop_;
  std::vector<PortId> annotated_ports_;  // the non-annotation ports of the op being checked
  std::vector<std::pair<Symbol, const Value*>> pending_fill_;
};

}  // namespace

ValidationResult validate(ir::Graph& g, Registry& registry, Diagnostics& diags, const ValidateOptions& options) {
  return Validator(g, registry, diags, options).run();
}

}  // namespace amanda::schema
