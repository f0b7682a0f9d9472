#include "boundary.h"

#include "amanda/ir/types.h"
#include "shapes.h"

namespace amanda::caffe2_frontend {

void prepare_for_onnx(ir::Graph& g, Diagnostics& diags) {
  infer_types(g);
  ir::OpId root = g.root();
  std::vector<ir::PortId> unused;
  for (ir::PortId p : g.inputs(root))
    if (!g.is_control(p) && !g.port_type(p) && g.out_degree(p) == 0) unused.push_back(p);
  for (size_t k = unused.size(); k-- > 0;) {
    diags.note(g.path(unused[k]), "external input '" + std::string(g.port_name_str(unused[k])) +
                                      "' is read by no op and has no type: left out of the ONNX model");
    g.erase_port(unused[k]);
  }
  // An input ops read that nothing typed (a weight whose rank the predict net does not say, such
  // as an FC's with axis_w other than 1, when there is no init net): ONNX needs its type.
  std::string untyped;
  size_t n = 0;
  for (ir::PortId p : g.inputs(root))
    if (!g.is_control(p) && !g.port_type(p)) {
      if (n++ < 8) untyped += (untyped.empty() ? "" : ", ") + std::string(g.port_name_str(p));
    }
  if (n)
    throw Error(std::to_string(n) + " external input(s) have no type, which an ONNX model needs: " + untyped +
                (n > 8 ? ", ..." : "") + " (give --input-shape NAME:DIMS for inputs, or the init net that holds the weights)");
  if (g.name_str(root).empty()) g.set_name(root, g.sym("caffe2_net"));
  // The graph's inputs and outputs spell their types as attributes too: what the ONNX writer reads
  // for the model's inputs and outputs.
  for (ir::PortDir dir : {ir::PortDir::In, ir::PortDir::Out})
    for (ir::PortId p : g.ports(root, dir))
      if (!g.is_control(p) && g.port_type(p)) ir::write_type_attrs(g, p, g.port_type(p));
}

}  // namespace amanda::caffe2_frontend
