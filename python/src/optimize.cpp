// amanda.optimize(graph, passes=...): the rewrite passes of amanda/passes/registry.h, as `amanda
// optimize` runs them (ONNX graphs typed by inference first, so that passes see shapes).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "amanda/pipeline/pipeline.h"
#include "amanda/passes/registry.h"
#include "amanda/pipeline/rewrite_tables.h"
#include "handles.h"

namespace py = pybind11;

namespace amanda::python {

void register_optimize(py::module_& m) {
  m.def(
      "optimize",
      [](PyGraph& g, std::optional<std::vector<std::string>> passes, std::vector<std::string> exclude, size_t fold_size_limit,
         size_t rounds, bool subgraphs) {
        ir::Graph& graph = live(g);
        auto retype = [](ir::Graph& x) { pipeline::infer_types(x, true); };
        retype(graph);
        const auto& reg = pipeline::optimize_registry();
        passes::PassOptions o;
        o.exclude = std::move(exclude);
        o.fold_size_limit = fold_size_limit;
        o.max_iterations = rounds;
        o.descend = subgraphs;
        o.retype = retype;
        passes::PipelineResult r = passes::run_pipeline(graph, passes ? *passes : reg.default_passes(), o, reg);
        py::dict out;
        out["ops_before"] = r.ops_before;
        out["ops_after"] = r.ops_after;
        out["rounds"] = r.rounds;
        out["seconds"] = r.seconds;
        py::list ps;
        for (const auto& [name, pr] : r.passes) {
          py::dict d;
          d["name"] = name;
          d["rewrites"] = pr.rewrites;
          d["erased"] = pr.erased;
          d["created"] = pr.created;
          d["refused"] = pr.refused;
          d["notes"] = pr.notes;
          ps.append(d);
        }
        out["passes"] = ps;
        return out;
      },
      py::arg("graph"), py::arg("passes") = py::none(), py::arg("exclude") = std::vector<std::string>{},
      py::arg("fold_size_limit") = size_t(64) << 20, py::arg("rounds") = 32, py::arg("subgraphs") = true,
      "Rewrites the graph in place with the named passes (default: amanda optimize's default list), as `amanda optimize` "
      "does; exclude: op names or glob patterns no pass may change. Returns a dict: ops_before, ops_after (Constant ops "
      "not counted), rounds, seconds, passes (name, rewrites, erased, created, refused, notes). Raises Error for an "
      "unknown pass name");
  m.def(
      "optimize_passes",
      [] {
        py::list l;
        for (const passes::PassInfo* p : pipeline::optimize_registry().all()) {
          py::dict d;
          d["name"] = p->name;
          d["doc"] = p->doc;
          d["default"] = p->in_default;
          d["onnx_only"] = p->onnx_only;
          l.append(d);
        }
        return l;
      },
      "Every pass amanda.optimize knows: name, doc, default, onnx_only");
}

}  // namespace amanda::python
