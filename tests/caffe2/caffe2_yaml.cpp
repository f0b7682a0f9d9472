// Test tool: a Caffe2 NetDef (with its init net) -> the YAML form of its graph with every port type
// written, which `amanda convert` then converts like any graph. It calls the reader's functions
// directly, for the tests that run before the framework is registered with the tool, and for the
// reverse direction: `caffe2_yaml --write DOC.yaml predict_net.pb` writes a NetDef (and its init
// net beside it) from a YAML graph.
//   caffe2_yaml PREDICT [--init INIT] [--input-type NAME:float32[1,3,224,224]] [--for-onnx] -o OUT.yaml
// --for-onnx: the boundary pass the framework contributes to a conversion to ONNX (boundary.h).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "amanda/ir/types.h"
#include "netdef.h"
#include "boundary.h"
#include "shapes.h"

using namespace amanda;

static std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw Error("cannot read " + p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

static void spit(const std::string& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
  if (!f) throw Error("cannot write " + p);
}

static bool is_text(const std::string& p) { return p.ends_with(".pbtxt"); }

int main(int argc, char** argv) {
  try {
    std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 3 && a[0] == "--write") {
      Diagnostics diags;
      text::Document doc = text::read_file(a[1], diags);
      caffe2_frontend::ExportedNet n = caffe2_frontend::export_net(doc, is_text(a[2]));
      spit(a[2], n.predict);
      if (n.init) {
        std::string dir = a[2].substr(0, a[2].find_last_of('/') + 1);
        spit(dir + (is_text(a[2]) ? "init_net.pbtxt" : "init_net.pb"), *n.init);
      }
      return 0;
    }
    std::string predict, init, out;
    std::vector<std::string> types;
    bool for_onnx = false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == "--init") init = a.at(++i);
      else if (a[i] == "--input-type") types.push_back(a.at(++i));
      else if (a[i] == "-o") out = a.at(++i);
      else if (a[i] == "--for-onnx") for_onnx = true;
      else predict = a[i];
    }
    std::string pb = slurp(predict), ib;
    std::optional<caffe2_frontend::NetBytes> in;
    if (!init.empty()) {
      ib = slurp(init);
      in = caffe2_frontend::NetBytes{ib, is_text(init)};
    }
    caffe2_frontend::ImportOptions o;
    o.file_name = predict;
    o.init_file_name = init;
    text::Document doc = caffe2_frontend::import_net({pb, is_text(predict)}, in, o);
    ir::Graph& g = doc.graph;
    for (const auto& t : types) {
      size_t c = t.find(':');
      ir::PortId p;
      for (ir::PortId q : g.inputs(g.root()))
        if (g.port_name_str(q) == t.substr(0, c)) p = q;
      std::optional<ir::TypeId> id = ir::parse_type(g, t.substr(c + 1));
      if (!p || !id) throw Error("--input-type " + t + ": no such input or not a type");
      g.set_port_type(p, *id);
    }
    caffe2_frontend::infer_types(g);
    Diagnostics diags;
    if (for_onnx) caffe2_frontend::prepare_for_onnx(g, diags);
    for (const auto& d : diags.items()) std::fprintf(stderr, "%s: %s\n", d.where.c_str(), d.message.c_str());
    for (uint32_t i = 1; i < g.port_id_bound(); ++i)
      if (ir::PortId p(i); g.valid(p) && g.port_type(p)) ir::write_type_attrs(g, p, g.port_type(p));
    spit(out, text::to_text(doc, text::Format::Yaml));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "caffe2_yaml: %s\n", e.what());
    return 1;
  }
}
