#include "amanda/mapping/schema_step.h"

#include <algorithm>

#include <fmt/format.h>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/types.h"
#include "amanda/mapping/expr.h"

namespace amanda::mapping {

namespace {

std::string attr_default_str(const schema::AttrSchema& a) {
  const ir::Value* d = a.type.default_value();
  return d ? " = " + value_str(*d) : std::string(a.type.required() ? " (required)" : "");
}

// Ports compare by name and arity; the type parameter they use is a type matter.
// Single <-> Optional and a variadic port's minimum count are checked on the op at hand.
bool same_port(const schema::PortSchema& a, const schema::PortSchema& b) {
  auto loose = [](schema::Arity x) { return x == schema::Arity::Variadic ? 1 : 0; };
  return a.attrs == b.attrs && loose(a.arity) == loose(b.arity);
}

const ir::Value* port_attr(const ir::Graph& g, ir::PortId p, std::string_view key) {
  if (const ir::Value* v = ir::get_attr(g, p, "@" + std::string(key))) return v;
  return ir::get_attr(g, p, key);
}

}  // namespace

SchemaStep compare_schemas(const schema::OpSchema* src, const schema::OpSchema* dst, std::string_view dst_ns) {
  if (src && src == dst) return {SchemaStep::Kind::Same, {}};
  if (!dst) return {SchemaStep::Kind::Missing, fmt::format("{} does not exist in {}", src ? src->type : "the op", dst_ns)};
  if (dst->deprecated) return {SchemaStep::Kind::Missing, fmt::format("{} is deprecated in {}", dst->type, dst_ns)};
  if (!src) return {SchemaStep::Kind::Changed, "the op is not in the source namespace"};
  SchemaStep st;
  st.kind = SchemaStep::Kind::TypesOnly;
  auto changed = [&](std::string why) {
    st.kind = SchemaStep::Kind::Changed;
    st.why = std::move(why);
    return st;
  };
  // Attributes: by name (their order in a schema means nothing). One the target does not have
  // converts only at its default; one the target adds keeps the old meaning at its default (ONNX's
  // rule for new attributes; the exceptions, such as RoiAlign's coordinate_transformation_mode in
  // opset 16, are written in the tables).
  for (const auto& a : src->attrs) {
    const schema::AttrSchema* b = dst->attr(a.name);
    if (!b) {
      st.dropped_attrs.push_back(&a);
      continue;
    }
    const ir::Value *da = a.type.default_value(), *db = b->type.default_value();
    // Required or optional is a question for the op at hand (below); the type and default are not.
    if (a.type.type != b->type.type || a.type.form == schema::AttrType::Form::OneOf || b->type.form == schema::AttrType::Form::OneOf ||
        bool(da) != bool(db) || (da && !(*da == *db)))
      return changed(fmt::format("attribute '{}' is {}{} in {} (was {}{})", a.name, b->type.type, attr_default_str(*b), dst_ns, a.type.type,
                                 attr_default_str(a)));
  }
  for (const auto& b : dst->attrs) {
    const schema::AttrSchema* a = src->attr(b.name);
    if (!a && b.type.required()) return changed(fmt::format("attribute '{}' is new and required in {}", b.name, dst_ns));
    if (a && b.type.required() && !a->type.required()) st.required_attrs.push_back(&b);
  }
  // Ports: the same up to the shorter list; the rest must be optional (left out, or unused).
  for (int side = 0; side < 2; ++side) {
    const auto& a = side ? src->outputs : src->inputs;
    const auto& b = side ? dst->outputs : dst->inputs;
    const char* what = side ? "output" : "input";
    auto name = [](const schema::PortSchema& p) { return p.expected_name().value_or("?"); };
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
      if (same_port(a[i], b[i])) {
        // the target requires a port the source may leave out: the op must have it
        if (!side && b[i].arity == schema::Arity::Single && a[i].arity == schema::Arity::Optional) st.required_inputs.push_back(i);
        if (!side && b[i].arity == schema::Arity::Variadic && b[i].min_arity > a[i].min_arity) st.min_variadic = b[i].min_arity;
      } else {
        if (name(a[i]) != name(b[i])) return changed(fmt::format("{} #{} '{}' is '{}' in {}", what, i, name(a[i]), name(b[i]), dst_ns));
        return changed(fmt::format("{} '{}' is {} in {} (was {})", what, name(a[i]), schema::arity_name(b[i].arity), dst_ns,
                                   schema::arity_name(a[i].arity)));
      }
    for (size_t i = n; i < std::max(a.size(), b.size()); ++i) {
      const schema::PortSchema& p = i < a.size() ? a[i] : b[i];
      if (p.arity != schema::Arity::Optional)
        return changed(fmt::format("{} '{}' ({}) is {} in {}", what, name(p), schema::arity_name(p.arity), i < a.size() ? "not there" : "new",
                                   dst_ns));
    }
    if (a.size() > b.size()) (side ? st.max_outputs : st.max_inputs) = b.size();
  }
  return st;
}

std::string extension_refusal(const ir::Graph& g, ir::OpId op, const SchemaStep& st, std::string_view dst_ns) {
  for (const schema::AttrSchema* a : st.dropped_attrs) {
    const ir::Value* v = ir::get_attr(g, op, a->name);
    if (!v) continue;
    const ir::Value* d = a->type.default_value();
    if (d && *d == *v) continue;
    return fmt::format("attribute '{}' = {} is not in {}{}", a->name, value_str(*v), dst_ns,
                       d ? " (only its default, " + value_str(*d) + ", converts)" : std::string(" (it converts only when absent)"));
  }
  for (const schema::AttrSchema* a : st.required_attrs)
    if (!ir::get_attr(g, op, a->name)) return fmt::format("attribute '{}' is absent, and {} requires it", a->name, dst_ns);
  {
    std::vector<ir::PortId> ins;
    for (ir::PortId p : g.inputs(op))
      if (!g.is_control(p) && !g.port_name_str(p).starts_with("@")) ins.push_back(p);
    for (size_t i : st.required_inputs)
      if (i >= ins.size() || !g.producer(ins[i]))
        return fmt::format("input #{} is absent, and {} requires it", i, dst_ns);
    if (st.min_variadic && ins.size() < st.min_variadic) return fmt::format("{} requires at least {} inputs", dst_ns, st.min_variadic);
  }
  for (int side = 0; side < 2; ++side) {
    size_t limit = side ? st.max_outputs : st.max_inputs;
    size_t k = 0;
    for (ir::PortId p : g.ports(op, side ? ir::PortDir::Out : ir::PortDir::In)) {
      if (g.is_control(p) || g.port_name_str(p).starts_with("@")) continue;
      if (k++ < limit) continue;
      bool used = side ? bool(g.first_out_edge(p)) : bool(g.producer(p));
      if (used)
        return fmt::format("{} '{}' is {}, and {}'s op has no such {}", side ? "output" : "input", g.port_name_str(p),
                           side ? "used" : "connected", dst_ns, side ? "output" : "input");
    }
  }
  return {};
}

void drop_extensions(ir::Rewriter& rw, ir::OpId op, const SchemaStep& st) {
  ir::Graph& g = rw.graph();
  for (const schema::AttrSchema* a : st.dropped_attrs) rw.erase_attr(op, g.sym(a->name));
  for (int side = 0; side < 2; ++side) {
    size_t limit = side ? st.max_outputs : st.max_inputs;
    if (limit == SIZE_MAX) continue;
    std::vector<ir::PortId> extra;
    size_t k = 0;
    for (ir::PortId p : g.ports(op, side ? ir::PortDir::Out : ir::PortDir::In)) {
      if (g.is_control(p) || g.port_name_str(p).starts_with("@")) continue;
      if (k++ >= limit) extra.push_back(p);
    }
    for (ir::PortId p : extra) rw.erase_port(p);
  }
}

std::string port_value_type(const ir::Graph& g, ir::PortId p) {
  auto text = [&](ir::PortId q) -> std::string {
    const ir::Value* v = port_attr(g, q, "type");
    return v && v->is_string() ? v->as_string() : std::string();
  };
  if (g.port_dir(p) == ir::PortDir::In) {
    ir::PortId src = g.producer(p);
    if (!src) return {};
    p = src;
  }
  std::string t = text(p);
  if (!t.empty()) return t;
  // An op's output that feeds a graph output: the graph's output port has the type.
  for (ir::EdgeId x = g.first_out_edge(p); x; x = g.next_out_edge(x)) {
    ir::PortId dst = g.edge_dst(x);
    ir::OpId op = g.port_op(dst);
    if (op == g.root() || g.is_graph(op)) {
      t = text(dst);
      if (!t.empty()) return t;
    }
  }
  return {};
}

const std::vector<std::string>* allowed_types(const schema::OpSchema& s, bool input, size_t k) {
  const auto& ports = input ? s.inputs : s.outputs;
  if (ports.empty()) return nullptr;
  if (k >= ports.size()) {
    if (ports.back().arity != schema::Arity::Variadic) return nullptr;
    k = ports.size() - 1;
  }
  const std::string& param = ports[k].type;
  for (const auto& tc : s.type_constraints)
    if (tc.name == param) return &tc.allowed;
  return nullptr;
}

// A port's type as a frontend spelt it (`float32`, `Float`) against a schema's `tensor(float)`.
bool same_tensor_type(const std::string& t, const std::string& allowed) {
  if (!allowed.starts_with("tensor(") || !allowed.ends_with(")")) return false;
  auto a = ir::elem_from_any_name(std::string_view(allowed).substr(7, allowed.size() - 8));
  auto b = ir::elem_from_any_name(t);
  return a && b && *a == *b;
}

std::string type_refusal(const ir::Graph& g, ir::OpId op, const schema::OpSchema& dst, std::string_view dst_ns) {
  for (bool input : {true, false}) {
    size_t k = 0;
    for (ir::PortId p : g.ports(op, input ? ir::PortDir::In : ir::PortDir::Out)) {
      if (g.is_control(p) || g.port_name_str(p).starts_with("@")) continue;
      size_t index = k++;
      const std::vector<std::string>* allowed = allowed_types(dst, input, index);
      if (!allowed || allowed->empty()) continue;
      std::string t = port_value_type(g, p);
      if (t.empty() || std::find(allowed->begin(), allowed->end(), t) != allowed->end()) continue;
      if (std::any_of(allowed->begin(), allowed->end(), [&](const std::string& a) { return same_tensor_type(t, a); })) continue;
      const auto& ports = input ? dst.inputs : dst.outputs;
      const std::string& param = ports[std::min(index, ports.size() - 1)].type;
      std::string list;
      for (const auto& a : *allowed) list += (list.empty() ? "" : ", ") + a;
      return fmt::format("{} '{}' is {}; {} in {} takes {} in {{{}}}", input ? "input" : "output", g.port_name_str(p), t, dst.type,
                         dst_ns, param, list);
    }
  }
  return {};
}

}  // namespace amanda::mapping
