// nd4j / SameDiff as a framework plug-in (include/amanda/pipeline/framework.h).
#include "amanda/pipeline/framework.h"

#include "amanda/interp/fold.h"

#include "amanda/pipeline/pipeline.h"
#include "amanda/pipeline/fold.h"
#include "frameworks/nd4j/nd4j.h"

namespace amanda::nd4j {

namespace {

bool is_nd4j(std::string_view ns) { return ns.starts_with("amanda/nd4j"); }

// A torch export computes shapes, slice bounds and attention masks in the graph (Shape -> Gather ->
// Concat -> Reshape, swin_t's Range/ConstantOfShape masks); DL4J's rules take those as constants
// (Reshape's shape, Slice's bounds become ordered arguments). So what no graph input changes is
// folded first, typing with the small tensors' values between rounds (a round makes more shapes
// known) and once more after, as the conversions into amanda/core and TensorFlow do.
void fold_onnx_source(pipeline::PassContext& ctx) { pipeline::fold_and_type(ctx); }

class Nd4jFramework final : public pipeline::Framework {
 public:
  std::string_view name() const override { return "nd4j"; }
  std::string_view description() const override {
    return "nd4j / SameDiff: FlatBuffers graphs (.fb) in the amanda/nd4j namespace of ordered-argument ops";
  }
  std::vector<std::string> namespace_prefixes() const override { return {"amanda/nd4j/"}; }

  int detect_read(const pipeline::Probe& probe) const override {
    // A FlatGraph has no file identifier: the extension decides, the verifier then checks it all.
    return !probe.is_folder && probe.extension == ".fb" ? 10 : 0;
  }
  text::Document read(pipeline::ReadContext& ctx) const override {
    return read_flatgraph(ctx.files.map_model(), ctx.files.model_path());
  }
  int detect_write(std::string_view path, std::string_view graph_ns) const override {
    return path.ends_with(".fb") ? (is_nd4j(graph_ns) ? 100 : 10) : 0;
  }
  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    std::string bytes = write_flatgraph(doc);
    ctx.files.main().write(bytes);
  }
  std::vector<std::string> default_targets(std::string_view, std::string_view) const override { return {std::string(kNamespace)}; }
  void add_namespaces(schema::Registry& registry) const override { add_to(registry); }
  void register_conventions(ir::Conventions& c) const override { nd4j::register_conventions(c); }

  size_t validate(const ir::Graph& g, Diagnostics& problems) const override { return check_ordered_args(g, problems); }

  void contribute_passes(pipeline::PassList& passes, const pipeline::ConversionInfo& info) const override {
    if (is_nd4j(info.target_ns) && info.source_ns.starts_with("amanda/onnx/"))
      passes.add({"nd4j.fold", pipeline::Stage::Prepare,
                  "ONNX -> nd4j: fold the values no graph input changes (computed shapes, slice bounds, masks) into constants",
                  [](pipeline::PassContext& ctx) { fold_onnx_source(ctx); }});
    if (is_nd4j(info.target_ns) && !is_nd4j(info.source_ns)) {
      passes.add({"nd4j.constants", pipeline::Stage::Boundary,
                  "constant ops become CONSTANT variables (graph inputs with an initializer): SameDiff has no constant op",
                  [](pipeline::PassContext& ctx) { constants_to_initializers(ctx.doc.graph); }});
      // The types the source framework inferred, given back to the nd4j ports that keep their value's name.
      auto memo = std::make_shared<TypeMemo>();
      passes.add({"nd4j.remember-types", pipeline::Stage::Convert, "the value types before the tables run",
                  [memo](pipeline::PassContext& ctx) { *memo = remember_types(ctx.doc.graph); }});
      passes.add({"nd4j.restore-types", pipeline::Stage::Finish, "the value types given back to the nd4j values of the same name",
                  [memo](pipeline::PassContext& ctx) { restore_types(ctx.doc.graph, *memo); }});
    }
    if (is_nd4j(info.source_ns) && !is_nd4j(info.target_ns))
      passes.add({"nd4j.drop-noops", pipeline::Stage::Boundary, "noops nothing reads are dropped (they only order execution)",
                  [](pipeline::PassContext& ctx) { drop_unused_noops(ctx.doc.graph); }});
    // (nd4j -> ONNX's finish, typing every value, is the nd4j-onnx conversion extension's:
    // src/conversions/nd4j_onnx/extension.cpp, after its Loops and Ifs are named.)
    if (is_nd4j(info.target_ns) || is_nd4j(info.source_ns))
      passes.add({"nd4j.ordered-arguments", pipeline::Stage::Validate,
                  "every nd4j op's ordered arguments are complete (no argument missing before a given one)",
                  [](pipeline::PassContext& ctx) {
                    if (check_ordered_args(ctx.doc.graph, ctx.diags)) ctx.failed = true;
                  }});
  }
};

}  // namespace

std::unique_ptr<pipeline::Framework> make_framework() { return std::make_unique<Nd4jFramework>(); }

}  // namespace amanda::nd4j

namespace amanda::frameworks {
std::unique_ptr<amanda::pipeline::Framework> make_nd4j() { return nd4j::make_framework(); }
}  // namespace amanda::frameworks
