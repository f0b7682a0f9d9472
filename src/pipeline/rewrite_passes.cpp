// The passes layer's rewrite passes (amanda/passes/registry.h) as the conversion's Optimize stage
// sees them (ConvertRequest::optimize, `amanda convert --optimize`): one OptimizePass per pass name,
// each run to its own fixed point, and "default" for amanda optimize's whole default list.
#include "amanda/passes/registry.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/pipeline/rewrite_tables.h"

namespace amanda::pipeline {

void register_rewrite_passes(std::vector<OptimizePass>& out) {
  const auto& reg = optimize_registry();
  auto runner = [](std::vector<std::string> names) {
    return [names](PassContext& c) {
      // Typed again between rounds, as `amanda optimize` does: a folded shape chain gives the next
      // round static shapes.
      passes::PassOptions o;
      schema::Registry* reg = &c.registry;
      o.retype = [reg](ir::Graph& g) { infer_types(g, true, reg); };
      o.retype(c.doc.graph);
      passes::run_pipeline(c.doc.graph, names, o, optimize_registry());
    };
  };
  out.push_back({"default", "amanda optimize's default passes, to a fixed point", runner(reg.default_passes())});
  for (const passes::PassInfo* p : reg.all()) out.push_back({p->name, p->doc, runner({p->name})});
}

}  // namespace amanda::pipeline
