#include "boundary.h"

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
  if (g.name_str(root).empty()) g.set_name(root, g.sym("caffe2_net"));
}

}  // namespace amanda::caffe2_frontend
