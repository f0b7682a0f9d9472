#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "amanda/mapping/engine.h"
#include "amanda/support/file.h"
#include "amanda/schema/validate.h"

namespace amanda::mapping {


void TableSet::add_folder(const std::string& dir) {
  for (const auto& f : data_files(dir)) add(read_table(f));
}

// Tables with the same src and dst are one table split over several files: their rules are
// joined in load order (file names sorted), and a rule name may be used once.
void TableSet::add(std::unique_ptr<Table> t) {
  if (t->reversible) reversed_.push_back(reverse_table(*t));
  for (auto& have : tables_) {
    if (have->src != t->src || have->dst != t->dst) continue;
    // (one rule written for a list of types stands for several rules of the same name: the names
    // are checked against the tables already loaded only)
    size_t before = have->rules.size();
    for (Rule& r : t->rules) {
      for (size_t i = 0; i < before; ++i)
        if (const Rule& x = have->rules[i]; x.name == r.name)
          throw ParseError(r.loc, fmt::format("rule '{}' is also declared at {}", r.name, x.loc.str()));
      r.order = have->rules.size();
      have->rules.push_back(std::move(r));
    }
    have->file += ", " + t->file;
    return;
  }
  tables_.push_back(std::move(t));
}

namespace {
// A table for src S applies to namespace N when S == N, or S is N's family ("amanda/pytorch" for
// "amanda/pytorch/1.13"): tables can be written for a whole hierarchy.
bool applies(const std::string& table_src, const std::string& ns) {
  if (table_src == ns) return true;
  return ns.size() > table_src.size() && ns.compare(0, table_src.size(), table_src) == 0 && ns[table_src.size()] == '/';
}
}  // namespace

std::vector<const Table*> TableSet::plan(const std::string& from, const std::string& to) {
  if (from == to) return {};
  std::vector<const Table*> all;
  for (const auto& t : tables_) all.push_back(t.get());
  for (const auto& t : reversed_) all.push_back(t.get());
  // Breadth-first over namespaces: the chain with the fewest tables; ties go to tables in load order.
  std::map<std::string, std::pair<std::string, const Table*>> prev;
  std::deque<std::string> q{from};
  prev[from] = {"", nullptr};
  while (!q.empty()) {
    std::string ns = q.front();
    q.pop_front();
    if (ns == to) break;
    for (const Table* t : all) {
      if (!applies(t->src, ns) || prev.contains(t->dst)) continue;
      prev[t->dst] = {ns, t};
      q.push_back(t->dst);
    }
  }
  if (!prev.contains(to)) {
    std::string known;
    for (const Table* t : all)
      if (applies(t->src, from)) known += (known.empty() ? "" : ", ") + t->dst;
    throw Error(fmt::format("no chain of mapping tables leads from {} to {} (tables from {} go to: {})", from, to, from,
                            known.empty() ? "none" : known));
  }
  std::vector<const Table*> chain;
  for (std::string ns = to; ns != from; ns = prev[ns].first) chain.push_back(prev[ns].second);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::string shipped_table_dir() {
#ifdef AMANDA_SOURCE_TABLES
  return schema::shipped_data_dir("tables", "AMANDA_TABLES_DIR", AMANDA_SOURCE_TABLES);
#else
  return schema::shipped_data_dir("tables", "AMANDA_TABLES_DIR", "tables");
#endif
}

Report convert(ir::Graph& g, const std::string& to, TableSet& tables, schema::Registry& reg, const ConvertOptions& o) {
  std::string from(g.str(g.graph_namespace(g.root())));
  if (from.empty()) throw Error("the graph has no namespace to convert from");
  if (!reg.known(to)) throw Error("unknown namespace " + to + " (`amanda schema list` shows the known ones)");
  Report rep;
  std::vector<const Table*> chain = tables.plan(from, to);
  for (size_t k = 0; k < chain.size(); ++k) {
    if (k && o.between_steps) o.between_steps(g);
    CompiledTable ct(*chain[k], reg, o.tags);
    ct.apply(g, o, rep);
    if (!rep.ok() && !o.keep_unmapped) return rep;
  }
  g.set_graph_namespace(g.root(), g.sym(to));
  Diagnostics d;
  schema::ValidationResult v = schema::validate(g, reg, d);
  if (!v.ok() && !o.keep_unmapped) {
    size_t k = 0;
    for (const auto& x : d.items()) {
      if (x.severity != Severity::Error) continue;
      if (++k > 20) {
        rep.errors.push_back(fmt::format("... {} problems in all", v.problems));
        break;
      }
      rep.errors.push_back("result does not validate: " + x.where + ": " + x.message);
    }
  }
  return rep;
}

}  // namespace amanda::mapping
