// The TorchScript writer (issue 29): a graph of the PyTorch namespace (amanda/pytorch/1.13, what the
// ONNX -> PyTorch tables produce) written as a `.pt` archive in torch 1.13's layout, which
// torch.jit.load runs with no Amanda installed. No libtorch at write time: the archive is a zip
// (zip_writer.h) of pickles (data.pkl: the module object whose attributes are the parameters and
// buffers; constants.pkl) and the module's class as TorchScript source (code_emitter.h). See
// docs/pytorch-export.md.
#pragma once

#include <string>
#include <vector>

#include "amanda/ir/graph.h"
#include "amanda/support/gate.h"

namespace amanda::torch_frontend {

// Whether torch 1.13 has tensors of this element type (no uint16/32/64, strings, float8, ...).
bool torch_has_dtype(ir::DType d);

// One attribute of the module: a parameter (floating-point weights) or a buffer.
struct ModuleAttr {
  std::string name;
  const ir::Tensor* tensor = nullptr;  // borrowed from the graph
  bool parameter = false;
};

// The module's class: its source and attributes.
struct ModuleSource {
  std::string qualified_name;  // __torch__.amanda_export.Model
  std::string code;            // code/__torch__/amanda_export.py
  std::vector<ModuleAttr> attrs;
};

// The class of the module whose forward() runs `g` (throws amanda::Error naming the op and the
// reason for what it cannot write).
ModuleSource emit_module(const ir::Graph& g);

// data.pkl for the module: its attributes, the tensors' storages named "0", "1", ... in order.
std::string module_pickle(const ModuleSource& m);

// The whole archive into files.main().
void write_torchscript(const ir::Graph& g, WriteGate& files);

}  // namespace amanda::torch_frontend
