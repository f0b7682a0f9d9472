#include "amanda/ir/conventions.h"

#include <algorithm>

namespace amanda::ir {

void Conventions::add_dtype_codes(std::string_view system, DTypeCodes codes) {
  for (auto& [name, c] : systems_)
    if (name == system) {
      c = std::move(codes);
      return;
    }
  systems_.emplace_back(std::string(system), std::move(codes));
}

const DTypeCodes* Conventions::dtype_codes(std::string_view system) const {
  for (const auto& [name, c] : systems_)
    if (name == system) return &c;
  return nullptr;
}

std::vector<std::string> Conventions::dtype_systems() const {
  std::vector<std::string> r;
  for (const auto& s : systems_) r.push_back(s.first);
  std::sort(r.begin(), r.end());
  return r;
}

void Conventions::add_constant_op(std::string_view type) {
  if (!is_constant_op(type)) constant_ops_.emplace_back(type);
}

void Conventions::add_loop_back_op(std::string_view type) {
  if (!is_loop_back_op(type)) loop_back_ops_.emplace_back(type);
}

bool Conventions::is_loop_back_op(std::string_view type) const {
  for (const auto& t : loop_back_ops_)
    if (t == type) return true;
  return false;
}

bool Conventions::is_constant_op(std::string_view type) const {
  return std::find(constant_ops_.begin(), constant_ops_.end(), type) != constant_ops_.end();
}

Conventions& conventions() {
  static Conventions c;
  return c;
}

bool is_constant_output(const Graph& g, PortId src) {
  if (g.port_role(src) == PortRole::Constant) return true;
  return conventions().is_constant_op(g.type_str(g.port_op(src)));
}

const Value* constant_tensor(const Graph& g, PortId src) {
  if (!src) return nullptr;
  OpId op = g.port_op(src);
  if (op == g.root() || g.is_graph(op)) {
    const Value* v = fixed_initializer(g, src);
    return v && v->is_tensor() ? v : nullptr;
  }
  if (!is_constant_output(g, src)) return nullptr;
  Symbol value = g.symbols().find("value");
  if (value == SymbolTable::kNone) return nullptr;
  const Value* v = g.attr(op, value);
  return v && v->is_tensor() ? v : nullptr;
}

const Value* fixed_initializer(const Graph& g, PortId p) {
  const SymbolTable& s = g.symbols();
  Symbol init = s.find("initializer");
  if (init == SymbolTable::kNone) return nullptr;
  const Value* v = g.attr(p, init);
  if (!v) return nullptr;
  Symbol gi_sym = s.find("graph_input");
  const Value* gi = gi_sym == SymbolTable::kNone ? nullptr : g.attr(p, gi_sym);
  return gi && gi->is_bool() && gi->as_bool() ? nullptr : v;
}

}  // namespace amanda::ir
