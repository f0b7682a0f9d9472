// Rewrite tables as passes: see amanda/pipeline/rewrite_tables.h.
#include "amanda/pipeline/rewrite_tables.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <map>
#include <absl/container/flat_hash_set.h>

#include "amanda/mapping/engine.h"
#include "amanda/mapping/table.h"
#include "amanda/mapping/table_scan.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"

namespace amanda::pipeline {

namespace {

// One schema registry for every table pass of the process, made when a table first has work:
// building it reads every namespace (libonnx's whole registry among them), 10+ ms that a model
// without a matching op never pays.
schema::Registry& shared_schemas() {
  static std::once_flag once;
  static schema::Registry* r = nullptr;
  std::call_once(once, [] { r = default_registry().release(); });  // kept to the end, as the tool keeps everything
  return *r;
}

// Refuses (throws: the engine rolls the rule application back) a change to an excluded op, as
// the C++ passes' guard does.
class ExcludeListener : public ir::RewriteListener {
 public:
  ExcludeListener(const ir::Graph& g, const passes::PassOptions& o) : g_(g), o_(o) {}
  void op_erased(ir::OpId op) override { check(op); }
  void op_modified(ir::OpId op) override { check(op); }

 private:
  void check(ir::OpId op) {
    if (g_.valid(op) && !g_.is_graph(op) && o_.excluded(g_, op)) throw Error(g_.path(op) + " is excluded from rewriting");
  }
  const ir::Graph& g_;
  const passes::PassOptions& o_;
};

// The version at the end of a namespace ("amanda/onnx/13" -> 13), or -1.
int ns_version(std::string_view ns) {
  size_t k = ns.rfind('/');
  if (k == std::string_view::npos || k + 1 == ns.size()) return -1;
  int v = 0;
  for (char c : ns.substr(k + 1)) {
    if (c < '0' || c > '9' || v > 100000) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// A namespace without its version ("amanda/onnx/13" -> "amanda/onnx"); unversioned ones whole.
std::string_view ns_family(std::string_view ns) { return ns_version(ns) < 0 ? ns : ns.substr(0, ns.rfind('/')); }

struct TableFile {
  std::string file;
  std::string family;  // of its namespace: the graphs it applies to
  int version = -1;  // of its namespace
  // What its rules need in a graph (mapping::scan_table): the shipped tables are read only when a
  // graph has the op types of one of their rules. Reading one at every start (the folder lookup,
  // YAML, the patterns parsed) was 3-4% of a small model's whole `amanda optimize` process.
  std::optional<std::vector<std::vector<std::vector<std::string>>>> needs;
  std::once_flag loaded;
  std::once_flag checked;
  std::string check_error;

  // The parsed table, read on first use (at once when the file was not scanned).
  mapping::Table& table() {
    std::call_once(loaded, [&] {
      table_ = std::shared_ptr<mapping::Table>(mapping::read_table(file));
    });
    return *table_;
  }

  void check(schema::Registry& reg) {
    std::call_once(checked, [&] {
      Diagnostics d;
      mapping::check_table(table(), reg, d);
      if (d.has_errors()) check_error = d.str();
    });
    if (!check_error.empty()) throw Error(check_error);
  }

  // Some rule has every op type of its pattern in the graph (nested graphs included).
  bool has_work(const ir::Graph& g) {
    // The graph's op types, once (by symbol: one hash per op, not a string compare per type)
    absl::flat_hash_set<Symbol> seen;
    std::vector<std::string> present;
    g.for_each_op([&](ir::OpId op) {
      if (seen.insert(g.type(op)).second) present.emplace_back(g.type_str(op));
    });
    if (needs)  // from the scan, without reading the file
      return std::any_of(needs->begin(), needs->end(), [&](const auto& n) { return mapping::need_satisfied(n, present); });
    auto has = [&](const std::string& t) { return std::find(present.begin(), present.end(), t) != present.end(); };
    for (const auto& r : table().rules)
      if (std::all_of(r.src.ops.begin(), r.src.ops.end(), [&](const auto& o) { return o.type.empty() || has(o.type); }))
        return true;
    return false;
  }

 private:
  std::shared_ptr<mapping::Table> table_;
};

// A pass of one or several files: a graph gets the file of the highest namespace version not
// above its own (a rule whose meaning changed between opsets is written once per era).
struct TablePass {
  std::vector<std::unique_ptr<TableFile>> files;

  TableFile* pick(const ir::Graph& g) const {
    std::string_view ns = g.str(g.graph_namespace(g.root()));
    int v = ns_version(ns);
    TableFile* best = nullptr;
    for (const auto& f : files)
      if (ns.empty() || ns_family(ns) == f->family)  // a table rewrites graphs of its own namespace
        if (v < 0 || f->version < 0 || f->version <= v)
        if (!best || f->version > best->version) best = f.get();
    return best;
  }

  passes::PassResult run(ir::Graph& g, const passes::PassOptions& o) const {
    passes::PassResult r;
    TableFile* f = pick(g);
    if (!f || !f->has_work(g)) return r;
    schema::Registry& reg = shared_schemas();
    f->check(reg);
    mapping::ConvertOptions co;
    ExcludeListener guard(g, o);
    if (!o.exclude.empty()) co.listener = &guard;
    mapping::Report rep = mapping::rewrite(g, f->table(), reg, co);
    for (const auto& [rule, n] : rep.by_rule) r.rewrites += n;
    for (const auto& e : rep.errors) r.notes.push_back(e);
    return r;
  }
};

}  // namespace

std::string shipped_rewrite_dir() {
#ifdef AMANDA_SOURCE_REWRITES
  return schema::shipped_data_dir("rewrites", "AMANDA_REWRITES_DIR", AMANDA_SOURCE_REWRITES);
#else
  return schema::shipped_data_dir("rewrites", "AMANDA_REWRITES_DIR", "rewrites");
#endif
}

void add_table_pass(passes::PassRegistry& reg, const std::vector<std::string>& files, const std::string& name, bool in_default,
                    bool onnx_only, bool check_now) {
  auto p = std::make_shared<TablePass>();
  std::string rules, shown;
  for (const auto& file : files) {
    auto f = std::make_unique<TableFile>();
    f->file = file;
    std::string src, dst;
    std::vector<std::string> rule_names;
    std::optional<mapping::TableScan> scan = check_now ? std::nullopt : mapping::scan_table(file);
    if (scan) {  // read when a graph has the op types of one of its rules (TableFile::has_work)
      src = scan->src, dst = scan->dst;
      rule_names = scan->rule_names;
      f->needs = std::move(scan->needs);
    } else {  // read now: a malformed table is refused before anything runs
      mapping::Table& t = f->table();
      src = t.src, dst = t.dst;
      for (const auto& r : t.rules) rule_names.push_back(r.name);
    }
    if (src != dst)
      throw Error(file + ": not a rewrite table (it maps " + src + " to " + dst + "; a rewrite table maps a namespace to itself)");
    f->version = files.size() > 1 ? ns_version(src) : -1;
    f->family = std::string(ns_family(src));
    if (check_now) f->check(shared_schemas());
    for (const auto& r : rule_names)
      if (rules.find(r) == std::string::npos) rules += (rules.empty() ? "" : ", ") + r;
    shown += (shown.empty() ? "" : ", ") + std::filesystem::path(file).filename().string();
    p->files.push_back(std::move(f));
  }
  std::string families;
  for (const auto& f : p->files)
    if (families.find(f->family) == std::string::npos) families += (families.empty() ? "" : ", ") + f->family;
  std::string doc = "the rewrite table " + shown + " to a fixed point on graphs of " + families + " (rules: " + rules + ")";
  reg.add({name, doc, [p](ir::Graph& g, const passes::PassOptions& o) { return p->run(g, o); }, onnx_only, in_default});
}

const passes::PassRegistry& optimize_registry() {
  static const passes::PassRegistry reg = [] {
    passes::PassRegistry r = passes::PassRegistry::builtin();
    namespace fs = std::filesystem;
    // rewrites/<family>/NAME.yaml is the pass NAME; rewrites/<family>/NAME/*.yaml too, one file per
    // namespace version from which it holds.
    std::string root = shipped_rewrite_dir();
    std::map<std::string, std::vector<std::string>> by_pass;  // name -> files
    std::vector<std::string> order;
    for (const auto& f : data_files(root)) {
      fs::path rel = fs::path(f).lexically_relative(root);
      auto parts = std::vector<fs::path>(rel.begin(), rel.end());
      if (parts.size() < 2) continue;
      std::string name = parts.size() == 2 ? rel.stem().string() : parts[1].string();
      auto [it, fresh] = by_pass.try_emplace(name);
      if (fresh) order.push_back(name);
      it->second.push_back(f);
    }
    // Not limited by the registry's namespace flag: each file applies only to graphs of the
    // namespace it names (TablePass::pick), whatever the folder it sits in.
    for (const auto& name : order) add_table_pass(r, by_pass[name], name, true, false, false);
    return r;
  }();
  return reg;
}

}  // namespace amanda::pipeline
