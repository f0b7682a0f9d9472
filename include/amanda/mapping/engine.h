// Applying mapping tables: rules are compiled once into a matcher that dispatches on op type, then
// one deterministic pass over each scope (in topological order, nested graphs included) claims
// matches, biggest patterns first, and rewrites them. Ops no rule maps are reported all at once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/ir/rewriter.h"
#include "amanda/mapping/table.h"
#include "amanda/schema/registry.h"

namespace amanda::mapping {

struct ConvertOptions {
  std::vector<std::string> tags;  // optional rules to use
  bool keep_unmapped = false;     // leave unmapped ops as they are instead of failing
  std::string explain;            // an op name: record why each candidate rule did or did not match it
  // Replaces an op the target namespace lacks by ops of its own namespace (ONNX function bodies,
  // onnx_frontend::expand_function): "" when done, else why not. Tried before the op is refused.
  std::function<std::string(ir::Graph&, ir::OpId, const std::string& ns)> expand;
  // Types (of namespace ns, the table's src) that `expand` may also take when the table's rule
  // that applies to the op is an `unsupported:` one (ReduceSum with axes at run time below 13): the
  // rules come first; the C++ lowering replaces only the refusal. When expand declines, the rule's
  // refusal stands.
  std::function<bool(const std::string& type, const std::string& ns)> lowers_refused;
  // Called for every op a rule creates or rewrites, with "rule 'NAME' of SRC -> DST (file:line)":
  // `amanda convert --check` names the rule behind a diverging op with it.
  std::function<void(ir::OpId, const std::string&)> on_rewrite;
  // Called between two tables of a chain (convert()): the ONNX io layer infers the types and
  // shapes of the ops the last table made, which the next table's conditions read.
  std::function<void(ir::Graph&)> between_steps;
  // Called after the last table, with the root already in the target namespace and before the
  // result is validated: what a framework's boundary needs that no table can say (graph inputs
  // that become placeholder ops, io::default_convert_options).
  std::function<void(ir::Graph&)> after_steps;
  // Hears every change the engine makes to the graph (every mutation goes through an
  // ir::Rewriter); rolled_back() when a rule's rewrite failed and was undone.
  ir::RewriteListener* listener = nullptr;
  // fixed_point tables: the most rewrites per scope before the engine gives up and reports that
  // the rules do not converge (0: 10 per op of the scope, plus 1000).
  size_t max_rewrites = 0;
  // Ops (by id, nonzero) that a layer table of the chain made for a later namespace: no table
  // touches them until the chain reaches it (convert() sets this; see Table::over).
  const std::vector<uint8_t>* sealed = nullptr;
};

struct OpCount {
  std::string type;
  std::string reason;  // unsupported: why the rule says it cannot be converted
  std::string rule;
  size_t count = 0;
  std::vector<std::string> names;  // the first few
};

struct Report {
  std::vector<std::string> tables;  // the chain applied, "src -> dst" each
  size_t ops = 0, mapped = 0, passed = 0;
  std::map<std::string, size_t> by_rule;
  std::vector<OpCount> unmapped;     // no rule, schema changed (or a foreign namespace)
  std::vector<OpCount> unsupported;  // a rule says the conversion cannot be done
  std::vector<std::string> errors;   // a mapper failed on a matched op (with the op's path)
  std::vector<std::string> explain;  // --explain lines
  bool ok() const { return unmapped.empty() && unsupported.empty() && errors.empty(); }
  std::string text() const;
  std::string json() const;
};

// How CompiledTable::apply drives the rules: as the table declares (one pass that claims
// matches, or `fixed_point: true`), or to a fixed point whatever it declares (a rewrite table run
// by convert() or rewrite()).
// Layer: a layer table (Table::over), run on the source graph before the chain: its rules apply
// where they match, every other op stays as it is, and no graph changes namespace.
enum class Drive { AsDeclared, FixedPoint, Layer };

class CompiledTable {
 public:
  // Compiles the rules of `t` (which must outlive this) selecting tagged rules by `tags`.
  CompiledTable(const Table& t, schema::Registry& reg, const std::vector<std::string>& tags = {});
  ~CompiledTable();
  CompiledTable(const CompiledTable&) = delete;
  CompiledTable& operator=(const CompiledTable&) = delete;

  const Table& table() const;
  // Converts g (graphs in the table's src namespace) in place. The report says what happened.
  // Every change goes through an ir::Rewriter, one transaction per rule application: a rule whose
  // mapper fails half-way (an expression error, anything thrown) is rolled back, its match left
  // byte for byte as it was, and the report names the rule and the op. Other rules' rewrites
  // stay, so on a failure callers keep a copy of the graph or discard it. A `fixed_point` table
  // is applied with MLIR's greedy worklist discipline (ir::apply_patterns_greedily).
  void apply(ir::Graph& g, const ConvertOptions& o, Report& report, Drive drive = Drive::AsDeclared) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Tables known to the tool: the shipped tables/ folder, $AMANDA_TABLE_PATH, --tables folders.
class TableSet {
 public:
  // Every *.yaml/*.yml/*.json table under dir, recursively. With `lazy`, a file whose header
  // (src, dst, reversible) a quick scan can read is parsed only when a plan needs its table, so a
  // conversion does not pay for the tables it does not use; a file the scan cannot read is parsed
  // at once, as without `lazy` (so its errors are reported here).
  void add_folder(const std::string& dir, bool lazy = false);
  void add(std::unique_ptr<Table> t);
  // Every table (lazily added ones are read now), in load order.
  std::vector<const Table*> tables();
  // The shortest chain of tables from namespace `from` to `to` (reversible tables count both
  // ways). Throws Error naming both namespaces when there is none.
  std::vector<const Table*> plan(const std::string& from, const std::string& to);
  // The same for converting `g`: files of the chain's first table declared `only_for` op types
  // that g does not have are not read (they stay pending for a later plan).
  std::vector<const Table*> plan(const std::string& from, const std::string& to, const ir::Graph& g);
  // The rewrite tables (src == dst) that apply to namespace ns, in load order. plan() puts them
  // into a chain at every namespace it passes through (the first, the last and each between),
  // before the table that leaves it; from == to gives just them.
  std::vector<const Table*> rewrites(const std::string& ns);

 private:
  // One (src, dst) pair: the files that make it (joined in load order), read or not yet.
  struct Slot {
    std::string src, dst;
    bool reversible = false;           // some file of it is (known from headers before reading)
    std::string over;                  // a layer table's `over` (no step of its own; Table::over)
    struct Pending {
      std::string file;
      size_t index = 0;    // its place in the load order of the pair's files
      bool scanned = false;  // its rules' needs are known (scanned when a plan first needs the pair)
      bool always = false;   // read whenever the pair is planned (reversible, a rewrite pair, or a scan that gave up)
      // per rule, the op types its pattern needs: per op, the types it may have (one of each op's
      // list must be in the graph for the rule to match)
      std::vector<std::vector<std::vector<std::string>>> needs;
    };
    size_t files = 0;              // files of the pair seen so far (read or pending)
    std::vector<Pending> pending;  // files not read yet, in load order
    std::unique_ptr<Table> table;      // the joined table of the files read so far
    std::vector<std::unique_ptr<Table>> reversed;  // one per reversible file read
  };
  Slot& slot_for(const std::string& src, const std::string& dst);
  // Joins a file's table (the index-th file of the pair in load order) into the slot's table.
  void join(Slot& s, std::unique_ptr<Table> t, size_t index);
  // Reads the slot's pending files; with `types` (the op types of the graph to convert), a file
  // declared only for other types stays pending.
  void materialize(Slot& s, const std::vector<std::string>* types = nullptr);
  std::vector<const Table*> plan_impl(const std::string& from, const std::string& to, const ir::Graph* g);
  std::vector<Slot> slots_;
};

std::string shipped_table_dir();

// Runs a rewrite table (src == dst: fusions, canonicalisations) over g to a fixed point, whatever
// its `fixed_point` key says: rules are applied with MLIR's greedy worklist discipline, each seeing
// the others' results, until none matches. The rewrites per scope are bounded
// (ConvertOptions::max_rewrites; by default 10 per op plus 1000): rules that keep rewriting each
// other's results are reported in Report::errors ("... did not reach a fixed point: N rewrites
// (the cap)"), so report.ok() is false. Throws Error when t.src != t.dst. Ops no rule matches are
// kept; the graph's namespace is not changed.
//   mapping::Report r = mapping::rewrite(g, *table, reg);   // r.by_rule: rewrites per rule
Report rewrite(ir::Graph& g, const Table& t, schema::Registry& reg, const ConvertOptions& o = {});

// Converts a graph from its root namespace to `to` along the planned chain, validating the result
// against `to`'s schemas. Rewrite tables of the namespaces the chain passes through run to a fixed
// point (see TableSet::rewrites, rewrite()). Returns the report; the graph is converted in place (on failure it is in
// an unspecified state).
Report convert(ir::Graph& g, const std::string& to, TableSet& tables, schema::Registry& reg, const ConvertOptions& o);

}  // namespace amanda::mapping
