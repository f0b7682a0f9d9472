// Reads a TorchScript archive (torch.jit.save) without libtorch: the zip, the pickled module
// objects and parameters, and the serialized Python of the methods, which it runs symbolically
// from forward(): submodule calls inline, ops whose inputs are all known (shape arithmetic, masks
// built from shapes, parameters reshaped before use) fold into constants, every other op becomes
// a graph op in the PyTorch namespace with ports named by its schema and typed, shaped outputs.
// The result has the form the libtorch plugin gives (docs/pytorch.md), so the same tables apply.
#pragma once

#include <string>

#include "amanda/frameworks/torch/torchscript.h"
#include "amanda/schema/schema.h"
#include "amanda/text/document.h"
#include "frameworks/torchscript/runtime.h"

namespace amanda::torchscript {

// Throws Unsupported for a construct it does not handle (the caller may use libtorch instead)
// and amanda::Error, naming the file, for a file that is not a TorchScript archive or is corrupt.
// An op with no shape rule still becomes a graph op, with untyped outputs (and so do the ops fed
// by them); its type is added to `shape_gaps` (the caller may prefer libtorch's typed graph).
text::Document import_archive(const std::string& path, const torch_frontend::ImportOptions& o,
                              const schema::NamespaceSchema& ns, std::vector<std::string>* shape_gaps = nullptr);
// The same for an archive already in memory; `name` is used in errors.
text::Document import_archive(std::shared_ptr<const Buffer> bytes, const std::string& name,
                              const torch_frontend::ImportOptions& o, const schema::NamespaceSchema& ns,
                              std::vector<std::string>* shape_gaps = nullptr);

}  // namespace amanda::torchscript
