// Caffe2 as a framework plug-in (include/amanda/pipeline/framework.h): NetDef files in and out
// through the gates, found by content (a `.pb` is TensorFlow's extension too).
#include <algorithm>
#include <map>

#include "amanda/interp/fold.h"
#include "amanda/ir/types.h"
#include "amanda/pipeline/framework.h"
#include "amanda/pipeline/pipeline.h"
#include "amanda/pipeline/fold.h"
#include "amanda/support/diagnostics.h"
#include "boundary.h"
#include "netdef.h"
#include "shapes.h"

namespace amanda::frameworks {

namespace {

namespace c2 = caffe2_frontend;

// An option's values, read through the map Options exposes inline (this library does not link the
// pipeline's, which links it: a cycle of static libraries).
const std::vector<std::string>& option_values(const pipeline::Options& o, const std::string& key) {
  static const std::vector<std::string> none;
  auto it = o.values().find(key);
  return it == o.values().end() ? none : it->second;
}

std::string file_name(std::string_view path) {
  size_t s = path.find_last_of('/');
  return std::string(s == std::string_view::npos ? path : path.substr(s + 1));
}

bool text_path(std::string_view path) { return path.ends_with(".pbtxt") || path.ends_with(".prototxt"); }

// `--input-shape NAME:1,3,224,224` (or the dims alone for the first input that is not an
// initializer) and `--input-type NAME:float32`: a NetDef says nothing of its inputs' types.
void type_inputs(ir::Graph& g, const pipeline::Options& o) {
  std::vector<ir::PortId> free;
  for (ir::PortId p : g.inputs(g.root()))
    if (!g.is_control(p) && g.port_role(p) != ir::PortRole::Initializer) free.push_back(p);
  // NAME:VALUE names the input; a VALUE alone goes to the next input without a named one, in order.
  auto assign = [&](const std::vector<std::string>& specs, const char* what) {
    std::map<uint32_t, std::string> out;
    size_t next = 0;
    for (const std::string& spec : specs) {
      size_t colon = spec.rfind(':');
      if (colon == std::string::npos) {
        if (next >= free.size()) throw Error(std::string("--") + what + " " + spec + ": the net has no more inputs to give it to");
        out[free[next++].value] = spec;
        continue;
      }
      std::string name = spec.substr(0, colon);
      ir::PortId hit;
      for (ir::PortId p : free)
        if (g.port_name_str(p) == name) hit = p;
      if (!hit) throw Error(std::string("--") + what + ": the net has no input '" + name + "'");
      out[hit.value] = spec.substr(colon + 1);
    }
    return out;
  };
  std::map<uint32_t, std::string> shape = assign(option_values(o, "input_shape"), "input-shape");
  const auto& type_specs = option_values(o, "input_type");
  std::map<uint32_t, std::string> dtype;
  if (type_specs.size() == 1 && type_specs[0].find(':') == std::string::npos) {
    for (const auto& [p, _] : shape) dtype[p] = type_specs[0];  // one type for every input given a shape
  } else {
    dtype = assign(type_specs, "input-type");
  }
  for (auto& [pv, dims] : shape) {
    std::string t = (dtype.count(pv) ? dtype[pv] : "float32") + "[" + dims + "]";
    std::optional<ir::TypeId> id = ir::parse_type(g, t);
    if (!id) throw Error("--input-shape " + dims + ": not a shape (expected dims such as 1,3,224,224)");
    g.set_port_type(ir::PortId(pv), *id);
  }
  for (auto& [pv, t] : dtype)
    if (!shape.count(pv)) {
      std::optional<ir::TypeId> id = ir::parse_type(g, t + "[*]");
      if (!id) throw Error("--input-type " + t + ": not an element type");
      g.set_port_type(ir::PortId(pv), *id);
    }
}

class Caffe2 final : public pipeline::Framework {
 public:
  std::string_view name() const override { return "caffe2"; }
  std::string_view description() const override {
    return "Caffe2 NetDef: predict_net.pb / .pbtxt, with the init_net.pb beside it or named by --option init_net=NAME";
  }
  std::vector<std::string> namespace_prefixes() const override { return {"amanda/caffe2/"}; }

  int detect_read(const pipeline::Probe& probe) const override {
    if (probe.is_folder) return 0;
    bool text = probe.extension == ".pbtxt" || probe.extension == ".prototxt";
    if (probe.extension != ".pb" && !text) return 0;
    // Content beats TensorFlow's extension-only guess; a file that is not a NetDef is not ours.
    return c2::looks_like_netdef(probe.head, text) ? 100 : 0;
  }

  text::Document read(pipeline::ReadContext& ctx) const override {
    const std::string& path = ctx.files.model_path();
    std::string base = file_name(path);
    auto predict = ctx.files.map_model();
    c2::ImportOptions io;
    io.file_name = path;
    std::shared_ptr<const Buffer> init;
    const auto& init_opt = option_values(ctx.options, "init_net");
    std::string init_name = init_opt.empty() ? std::string() : init_opt.back();
    if (!init_name.empty()) {
      // The gate takes names relative to the model's folder.
      std::string root = ctx.files.root();
      if (init_name.starts_with(root + "/")) init_name = init_name.substr(root.size() + 1);
      init = ctx.files.map(init_name, "init net");
    } else if (base.starts_with("predict_net")) {
      std::string beside = "init_net" + base.substr(std::string("predict_net").size());
      if (ctx.files.has_file(beside)) {
        init_name = beside;
        init = ctx.files.map(beside, "init net");
      }
    }
    io.init_file_name = init_name;
    std::optional<c2::NetBytes> init_bytes;
    if (init) init_bytes = c2::NetBytes{init->view(), text_path(init_name)};
    text::Document doc = c2::import_net(c2::NetBytes{predict->view(), text_path(path)}, init_bytes, io);
    type_inputs(doc.graph, ctx.options);
    return doc;
  }

  // A file named predict_net.pb (.pbtxt) is a Caffe2 net whatever the graph's namespace (an ONNX
  // model written there converts to Caffe2: above TensorFlow's 40 for its own .pb); any other .pb
  // only for a graph already in Caffe2's namespace (above TensorFlow's 20 for a foreign graph, below
  // its 40 when a conversion without --to asks who writes `model.pb`).
  int detect_write(std::string_view path, std::string_view graph_ns) const override {
    if (!path.ends_with(".pb") && !text_path(path)) return 0;
    if (file_name(path).starts_with("predict_net.")) return 50;
    return graph_ns.starts_with("amanda/caffe2/") ? 30 : 0;
  }

  void write(const text::Document& doc, pipeline::WriteContext& ctx) const override {
    const std::string& out = ctx.files.output_path();
    bool text = text_path(out);
    c2::ExportedNet net = c2::export_net(doc, text);
    ctx.files.main().write(net.predict);
    if (net.init) {
      std::string base = file_name(out);
      std::string init = base.starts_with("predict_net") ? "init_net" + base.substr(std::string("predict_net").size())
                                                         : (text ? "init_net.pbtxt" : "init_net.pb");
      if (init == base) throw Error(out + ": the init net would overwrite the predict net; name the output predict_net.pb");
      ctx.files.create(init).write(*net.init);
    }
  }

  std::vector<std::string> default_targets(std::string_view path, std::string_view source_ns) const override {
    return {std::string(c2::kCaffe2Namespace)};
  }

  pipeline::InferReport infer_types(ir::Graph& g, const pipeline::InferRequest&) const override {
    pipeline::InferReport r;
    r.ran = true;
    size_t ops = g.op_count(), typed = c2::infer_types(g);
    r.complete = typed == ops;
    r.summary = std::to_string(ops) + " ops, " + std::to_string(typed) + " typed by Caffe2's shape rules";
    return r;
  }

  void contribute_passes(pipeline::PassList& passes, const pipeline::ConversionInfo& info) const override {
    // Into Caffe2 from ONNX: Caffe2 has no ops for shape arithmetic computed in the graph (a torch
    // export's Shape -> Gather -> Concat -> Reshape, a class token's Expand): what no graph input
    // changes is folded into constants first, as the conversion into amanda/core does.
    if (info.target_ns.starts_with("amanda/caffe2/") && info.source_ns.starts_with("amanda/onnx/"))
      passes.add({"caffe2.fold", pipeline::Stage::Prepare,
                  "ONNX -> Caffe2: fold the values no graph input changes (computed shapes) into constants",
                  // (typed once more after folding: the rules that read a rank, MatMul, Softmax, Slice,
                  // need the values the folding left: swin_t's shifted windows and attention masks)
                  [](pipeline::PassContext& ctx) { pipeline::fold_and_type(ctx); }});
    if (!info.source_ns.starts_with("amanda/caffe2/")) return;
    if (info.target_ns.starts_with("amanda/onnx/"))
      passes.add({"caffe2.onnx-boundary", pipeline::Stage::Boundary,
                  "Caffe2 -> ONNX: value types from the shape rules, inputs ONNX cannot declare left out, a graph name",
                  [](pipeline::PassContext& ctx) { c2::prepare_for_onnx(ctx.doc.graph, ctx.diags); }});
    else
      passes.add({"caffe2.types", pipeline::Stage::Prepare, "Caffe2: value types from the ops' shape rules",
                  [](pipeline::PassContext& ctx) { c2::infer_types(ctx.doc.graph); }});
  }

  std::vector<pipeline::OptionInfo> options() const override {
    return {{"init_net", "the init net of a Caffe2 predict net (default: init_net.pb beside predict_net.pb)"},
            {"input_shape", "a Caffe2 input's shape: NAME:1,3,224,224 (the first input without a NAME)"},
            {"input_type", "a Caffe2 input's element type: NAME:float32 (float32 when a shape is given alone)"}};
  }
};

}  // namespace

std::unique_ptr<pipeline::Framework> make_caffe2() { return std::make_unique<Caffe2>(); }

}  // namespace amanda::frameworks
