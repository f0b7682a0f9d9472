// TensorFlow -> ONNX beyond the tables: a TensorFlow graph has no graph ports (its placeholders are
// the inputs, the outputs are what the caller fetches), TF1 loops and conds are frames of ops that
// become ONNX Loop/If, and after the tables the outputs need their value names and every value
// its type (docs/tensorflow.md, "Conversion to ONNX").
#include "amanda/frameworks/onnx/infer.h"
#include "onnx_boundary.h"
#include "amanda/pipeline/pipeline.h"
#include "output_ranks.h"
#include "tensor_arrays.h"

namespace amanda::conversions {

namespace {

// The loops' bodies and outputs take the ranks inference gives around them (type_loop_bodies).
void type_loops(ir::Graph& g) {
  if (!g.ops_of_type("Loop").empty()) {
    // TF1 loops: the bodies' inputs and the Loops' outputs take the ranks inference gives around them.
    onnx_frontend::InferOptions first;
    first.write_attrs = false;
    for (int round = 0; round < 4; ++round) {
      try {
        onnx_frontend::infer_types(g, first);
      } catch (const std::exception&) {
      }
      if (!tf_frontend::type_loop_bodies(g)) break;
    }
  }
}

void finish(ir::Graph& g) {
  // The ops the tables made have no value names or types yet: the graph outputs need both.
  tf_frontend::name_onnx_outputs(g);
  type_loops(g);
  onnx_frontend::InferOptions o;
  o.write_attrs = true;
  try {
    onnx_frontend::infer_types(g, o);
  } catch (const std::exception&) {
  }
  rank_unranked_outputs(g);
}

class TensorFlowToOnnx final : public pipeline::ConversionExtension {
 public:
  std::string_view name() const override { return "tensorflow-onnx"; }
  bool applies(std::string_view from, std::string_view to) const override {
    // PyTorch is reached from TensorFlow through ONNX (the planner's chain, issue 29): the same
    // boundary; the finish (ONNX value_info) only when ONNX is the target.
    return from.starts_with("amanda/tensorflow/") && (to.starts_with("amanda/onnx/") || to.starts_with("amanda/pytorch/"));
  }
  std::string handles_before_tables(std::string_view type) const override {
    static const std::pair<std::string_view, std::string_view> kBoundary[] = {
        {"Placeholder", "a graph input (of unknown rank when its shape gives none)"},
        {"NoOp", "dropped with the control edges (ONNX runs by data flow)"},
        {"TensorArrayCloseV3", "dropped: it frees the array, which is a value (a sequence) in ONNX"},
        {"Enter", "TF1 while loops (nested ones too) become ONNX Loops (tf1_loops.cpp)"},
        {"Exit", "TF1 while loops become ONNX Loops"},
        {"NextIteration", "TF1 while loops become ONNX Loops"},
        {"LoopCond", "TF1 while loops become ONNX Loops"},
        {"Switch", "TF1 loops and conds (nested ones too) become ONNX Loop / If (tf1_loops.cpp, tf1_conds.cpp)"},
        {"Merge", "TF1 loops and conds become ONNX Loop / If"},
        {"If", "TF2 functional control flow: onnx::If with the branch functions' bodies (tf2_control_flow.cpp)"},
        {"StatelessIf", "TF2 functional control flow: onnx::If with the branch functions' bodies"},
        {"While", "TF2 functional control flow: onnx::Loop with the cond and body functions' bodies (tf2_control_flow.cpp)"},
        {"StatelessWhile", "TF2 functional control flow: onnx::Loop with the cond and body functions' bodies"},
        {"TensorListFromTensor", "inside a TF1 loop: the tensor, read by GetItem"},
        {"TensorListGetItem", "inside a TF1 loop: a Gather of the list's tensor"},
        {"TensorListReserve", "inside a TF1 loop: a scan output"},
        {"TensorListSetItem", "inside a TF1 loop: a scan output"},
        {"TensorListStack", "after a TF1 loop: the scan output"},
        {"TensorArrayV3", "in a TF1 loop: a TensorList (tensor_arrays.cpp), then the loop lowering's forms"},
        {"TensorArrayScatterV3", "scattered at Range(0, n) for a TF1 loop: the tensor itself"},
        {"TensorArrayReadV3", "in a TF1 loop, at the iteration's index: a Gather of the scattered tensor"},
        {"TensorArrayWriteV3", "in a TF1 loop, at the iteration's index: a scan output"},
        {"TensorArrayGatherV3", "of every element after a TF1 loop: the scan output"},
        {"TensorArraySizeV3", "the size a TF1 loop's gather reads: dropped with it"},
    };
    for (auto [op, how] : kBoundary)
      if (op == type) return std::string(how);
    return {};
  }
  // Through ONNX to another framework (PyTorch) the finish does not run, but the next step's rules
  // need what it gives: the Loops lower_tf1_loops made renamed from `onnx::Loop` to `Loop` (ONNX's
  // inference knows no `onnx::Loop`: every value computed from one, handtrack's postprocessing,
  // had no rank), the graph outputs' value names (the .pt's variables), and the loops' bodies and
  // outputs typed (handtrack's preprocessing map/while: every convolution after it). So they are
  // done here once the graph is ONNX (after the chain's TF -> ONNX step, and again, idempotent,
  // after the ONNX rewrites that follow it).
  void between_steps(ir::Graph& g, std::string_view ns) const override {
    if (!ns.starts_with("amanda/onnx/")) return;
    tf_frontend::name_onnx_outputs(g);
    if (g.ops_of_type("Loop").empty()) return;
    type_loops(g);
    try {
      onnx_frontend::infer_types(g, {});  // (the ranks the last round gave, downstream)
    } catch (const std::exception&) {
    }
  }
  void contribute_passes(pipeline::PassList& passes, const pipeline::ConversionInfo& info) const override {
    passes.add({"tensorflow-onnx.boundary", pipeline::Stage::Boundary,
                "placeholders become graph inputs, fetched tensors graph outputs; TF1 loops and conds become Loop and If",
                [](pipeline::PassContext& c) {
                  rewrite_tensor_arrays(c.doc.graph);  // TF1 TensorArrays -> TensorLists, which the loop lowering converts
                  tf_frontend::make_onnx_boundary(c.doc.graph, c.request.options.all("outputs"));
                }});
    if (!info.target_ns.starts_with("amanda/onnx/")) return;
    passes.add({"tensorflow-onnx.finish", pipeline::Stage::Finish,
                "graph outputs take their names; every value its inferred type and shape (value_info)",
                [](pipeline::PassContext& c) { finish(c.doc.graph); }});
  }
};

}  // namespace

std::unique_ptr<pipeline::ConversionExtension> make_tensorflow_to_onnx() { return std::make_unique<TensorFlowToOnnx>(); }

}  // namespace amanda::conversions
