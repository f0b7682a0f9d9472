// `amanda table coverage`: per op, what the tables and the schemas do with it between two versions
// of a family (docs/opset-conversion.md is its --matrix output over ONNX opsets 1..17).
#include <algorithm>
#include <sstream>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "amanda/pipeline/framework.h"
#include "amanda/mapping/engine.h"
#include "amanda/mapping/schema_step.h"
#include "amanda/support/file.h"
#include "commands.h"

namespace amanda::tool {

namespace {

// Worst first: the overall verdict of a chain is its worst step's.
enum class Cover { Hole, Impossible, Conditional, Function, Converted, Unchanged };
const char* cover_name(Cover c) {
  switch (c) {
    case Cover::Hole: return "no rule";
    case Cover::Impossible: return "impossible";
    case Cover::Conditional: return "conditional";
    case Cover::Function: return "function body";
    case Cover::Converted: return "converted";
    case Cover::Unchanged: return "unchanged";
  }
  return "?";
}
const char* cover_mark(Cover c) {
  switch (c) {
    case Cover::Hole: return "?";
    case Cover::Impossible: return "x";
    case Cover::Conditional: return "c";
    case Cover::Function: return "f";
    case Cover::Converted: return "+";
    case Cover::Unchanged: return ".";
  }
  return "?";
}

struct Verdict {
  Cover cover = Cover::Unchanged;
  std::string why;
};

bool rule_is_conditional(const mapping::Rule& r) {
  if (r.when || r.src.ops.size() > 1) return true;
  for (const auto& p : r.src.ops[0].inputs)
    if (p.value || !p.optional) return true;  // a `const:` input, or a port that must be there
  for (const auto& a : r.src.ops[0].attrs)
    if (!a.expr || a.expr->kind != mapping::Expr::Kind::Ref) return true;  // a literal the attribute must equal
  return false;
}

Verdict step(const mapping::Table& t, const std::string& type, schema::Registry& reg) {
  const schema::OpSchema* a = reg.resolve(t.src, type);
  const schema::OpSchema* b = reg.resolve(t.dst, type);
  std::vector<const mapping::Rule*> rules;
  for (const auto& r : t.rules)
    for (const auto& o : r.src.ops)
      if (o.type == type) rules.push_back(&r);
  if (!rules.empty()) {
    bool any_map = false, unconditional = false;
    std::string refusals;
    for (const mapping::Rule* r : rules) {
      if (r->unsupported) {
        refusals += (refusals.empty() ? "" : "; ") + *r->unsupported;
        if (!r->when && r->src.ops.size() == 1 && !rule_is_conditional(*r) && !any_map)
          return {Cover::Impossible, *r->unsupported};
        continue;
      }
      any_map = true;
      if (!rule_is_conditional(*r)) unconditional = true;
    }
    if (unconditional) return {Cover::Converted, "rule"};
    return {Cover::Conditional, "rules; otherwise: " + (refusals.empty() ? std::string("unmapped") : refusals)};
  }
  mapping::SchemaStep st = mapping::compare_schemas(a, b, t.dst);
  switch (st.kind) {
    case mapping::SchemaStep::Kind::Same: return {Cover::Unchanged, {}};
    case mapping::SchemaStep::Kind::Changed: return {Cover::Hole, st.why};
    case mapping::SchemaStep::Kind::Missing:
      if (const pipeline::Framework* f = pipeline::FrameworkRegistry::instance().for_namespace(t.src);
          f && f->can_expand(type, t.src))
        return {Cover::Function, "expanded into its " + std::string(f->name()) + " function body"};
      return {Cover::Impossible, st.why};
    case mapping::SchemaStep::Kind::TypesOnly: break;
  }
  std::string cond;
  for (const auto* x : st.dropped_attrs) cond += (cond.empty() ? "" : ", ") + fmt::format("'{}' at its default", x->name);
  for (const auto* x : st.required_attrs) cond += (cond.empty() ? "" : ", ") + fmt::format("'{}' given", x->name);
  if (st.max_inputs != SIZE_MAX || st.max_outputs != SIZE_MAX) cond += (cond.empty() ? "" : ", ") + std::string("the extra optional ports unused");
  for (size_t side = 0; side < 2; ++side) {
    const auto& ports = side ? a->outputs : a->inputs;
    for (size_t k = 0; k < ports.size(); ++k) {
      const auto* from = mapping::allowed_types(*a, side == 0, k);
      const auto* to = mapping::allowed_types(*b, side == 0, k);
      if (!from || !to) continue;
      std::vector<std::string> lost;
      for (const auto& x : *from)
        if (std::find(to->begin(), to->end(), x) == to->end()) lost.push_back(x);
      if (lost.empty()) continue;
      std::string l;
      for (const auto& x : lost) l += (l.empty() ? "" : ", ") + x;
      cond += (cond.empty() ? "" : ", ") + fmt::format("{} '{}' not {}", side ? "output" : "input",
                                                       ports[k].expected_name().value_or("?"), l);
      break;
    }
  }
  if (cond.empty()) return {Cover::Converted, "types only"};
  return {Cover::Conditional, cond};
}

std::vector<std::string> ops_at(schema::Registry& reg, const std::string& family, int version) {
  std::set<std::string> names;
  for (int v = 1; v <= version; ++v)
    if (const schema::NamespaceSchema* ns = reg.find(family + "/" + std::to_string(v)))
      for (const auto& op : ns->ops) names.insert(op->type);
  std::vector<std::string> out;
  std::string ns = family + "/" + std::to_string(version);
  for (const auto& n : names)
    if (const schema::OpSchema* s = reg.resolve(ns, n); s && !s->deprecated) out.push_back(n);
  return out;
}

Verdict chain(const std::vector<const mapping::Table*>& tables, const std::string& type, schema::Registry& reg) {
  Verdict worst;
  for (const mapping::Table* t : tables) {
    Verdict v = step(*t, type, reg);
    if (v.cover < worst.cover) worst = {v.cover, fmt::format("{} -> {}: {}", t->src, t->dst, v.why)};
    if (v.cover == Cover::Impossible || v.cover == Cover::Hole) break;
    if (v.cover == Cover::Function) break;  // the body's ops go on; see their own rows
  }
  return worst;
}

// A vocabulary file: one op a line (its first word), `#` comments.
std::vector<std::string> read_vocabulary(const std::string& path) {
  // (map_file: a regular file only, refused with the path and the reason, like every other input.)
  std::shared_ptr<const Buffer> buf = map_file(path);
  std::istringstream in{std::string(buf->view())};
  std::vector<std::string> ops;
  std::string line;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    size_t e = line.find_first_of(" \t\r", b);
    ops.push_back(line.substr(b, e == std::string::npos ? std::string::npos : e - b));
  }
  return ops;
}

}  // namespace

int run_vocabulary_coverage(const std::string& from, const std::string& to, const std::vector<std::string>& files,
                            mapping::TableSet& tables) {
  // Against a list of ops (TF.js's graph executor, a peer converter's supported list): covered (a
  // rule, or code before the tables), refused with the rules' reason, or missing (no rule). An op
  // with no rule is unmapped in a conversion between two frameworks, whatever the target calls an
  // op of the same name, so schemas are not compared here.
  auto reg = tool_registry();
  std::vector<const mapping::Table*> plan = tables.plan(from, to);
  std::vector<const pipeline::ConversionExtension*> exts;
  for (const auto& e : pipeline::FrameworkRegistry::instance().extensions())
    if (e->applies(from, to)) exts.push_back(e.get());
  std::vector<const mapping::Table*> first;
  for (const mapping::Table* t : plan)
    if (t->src == from) first.push_back(t);
  bool missing_any = false;
  for (const std::string& file : files) {
    size_t covered = 0, conditional = 0, refused = 0, missing = 0;
    std::cout << fmt::format("## {} ({} -> {})\n\n", file, from, to);
    for (const std::string& op : read_vocabulary(file)) {
      std::string how;
      for (const auto* e : exts)
        if (how.empty()) how = e->handles_before_tables(op);
      if (!how.empty()) {
        ++covered;
        std::cout << fmt::format("{:<40} {:<11} {}\n", op, "covered", "before the tables: " + how);
        continue;
      }
      // An op of a namespace the tables import (TF.js's `tfjs::Prelu`) is matched by that spelling.
      std::string type = op;
      for (const mapping::Table* t : first)
        for (const auto& r : t->rules)
          for (const auto& o : r.src.ops)
            if (o.type.size() > op.size() && o.type.ends_with("::" + op)) type = o.type;
      // Rules that map it, and the reasons of those that refuse it (`unsupported:`).
      size_t maps = 0;
      std::string refusals;
      for (const mapping::Table* t : first)
        for (const auto& r : t->rules)
          for (const auto& o : r.src.ops)
            if (o.type == type) {
              if (r.unsupported) refusals += (refusals.empty() ? "" : "; ") + *r.unsupported;
              else ++maps;
              break;
            }
      Verdict v{Cover::Hole, "no rule"};
      if (maps && refusals.empty()) v = {Cover::Converted, fmt::format("{} rule{}", maps, maps == 1 ? "" : "s")};
      else if (maps) v = {Cover::Conditional, fmt::format("{} rule{}; refused: {}", maps, maps == 1 ? "" : "s", refusals)};
      else if (!refusals.empty()) v = {Cover::Impossible, refusals};
      std::string_view cls;
      switch (v.cover) {
        case Cover::Hole: cls = "missing"; ++missing; break;
        case Cover::Impossible: cls = "refused"; ++refused; break;
        case Cover::Conditional: cls = "conditional"; ++conditional; break;
        default: cls = "covered"; ++covered; break;
      }
      std::cout << fmt::format("{:<40} {:<11} {}\n", op, cls, v.why);
    }
    std::cout << fmt::format("\n{}: {} ops: {} covered, {} covered with conditions (refused otherwise, with the reason), "
                             "{} refused with a reason, {} missing\n\n",
                             file, covered + conditional + refused + missing, covered, conditional, refused, missing);
    missing_any |= missing != 0;
  }
  return missing_any ? kInvalid : kOk;
}

int run_table_coverage(const std::string& from, const std::string& to, bool matrix, mapping::TableSet& tables,
                       const std::string& matrix_framework) {
  auto reg = tool_registry();
  if (matrix) {
    // Every neighbouring step of a framework's versions (ONNX: opsets 1..17), both ways: one column each.
    const pipeline::Framework* fw = pipeline::FrameworkRegistry::instance().find(matrix_framework);
    std::vector<std::string> versions = fw ? fw->versions() : std::vector<std::string>{};
    if (versions.size() < 2) {
      std::cerr << "amanda: error: --matrix: framework '" << matrix_framework << "' has no list of versions\n";
      return kUsage;
    }
    const std::string family(schema::split_version(versions.front()).first);
    auto ver = [&](size_t i) { return std::stoi(std::string(schema::split_version(versions[i]).second)); };
    const int lo = ver(0), hi = ver(versions.size() - 1);
    std::vector<std::pair<int, int>> steps;
    for (int v = hi; v > lo; --v) steps.push_back({v, v - 1});
    for (int v = lo; v < hi; ++v) steps.push_back({v, v + 1});
    std::set<std::string> all;
    for (int v = lo; v <= hi; ++v)
      for (const auto& n : ops_at(*reg, family, v)) all.insert(n);
    std::cout << "| op |";
    for (auto [a, b] : steps) std::cout << fmt::format(" {}{} |", a, a > b ? "↓" : "↑");
    std::cout << "\n|---|";
    for (size_t i = 0; i < steps.size(); ++i) std::cout << ":-:|";
    std::cout << "\n";
    std::map<Cover, size_t> totals;
    std::vector<std::string> notes;
    for (const auto& op : all) {
      std::cout << "| " << op << " |";
      for (auto [a, b] : steps) {
        std::string src = family + "/" + std::to_string(a), dst = family + "/" + std::to_string(b);
        if (!reg->resolve(src, op) || reg->resolve(src, op)->deprecated) {
          std::cout << "   |";
          continue;
        }
        std::vector<const mapping::Table*> c = tables.plan(src, dst);
        Verdict v = chain(c, op, *reg);
        ++totals[v.cover];
        std::cout << " " << cover_mark(v.cover) << " |";
        if (v.cover != Cover::Unchanged && v.cover != Cover::Converted)
          notes.push_back(fmt::format("- {} {} -> {}: {} ({})", op, a, b, cover_name(v.cover), v.why));
      }
      std::cout << "\n";
    }
    std::cout << "\nSteps: ";
    for (auto& [c, n] : totals) std::cout << fmt::format("{} {} ({}), ", n, cover_name(c), cover_mark(c));
    std::cout << "\n\n## Conditions, functions and impossibilities\n\n";
    for (const auto& n : notes) std::cout << n << "\n";
    return totals[Cover::Hole] ? kInvalid : kOk;
  }
  auto [fam, fv] = schema::split_version(from);
  std::vector<const mapping::Table*> c = tables.plan(from, to);
  std::map<Cover, size_t> totals;
  for (const auto& op : ops_at(*reg, fam, std::stoi(fv))) {
    Verdict v = chain(c, op, *reg);
    ++totals[v.cover];
    std::cout << fmt::format("{:<34} {:<14} {}\n", op, cover_name(v.cover), v.why);
  }
  std::cout << fmt::format("{} -> {}:", from, to);
  for (auto& [k, n] : totals) std::cout << fmt::format(" {} {},", n, cover_name(k));
  std::cout << "\n";
  return totals[Cover::Hole] ? kInvalid : kOk;
}

}  // namespace amanda::tool
