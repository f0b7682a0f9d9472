// The ONNX namespaces, generated from the installed libonnx's own operator registry (not a hand
// copy): every domain and every opset version it knows.
//
//   ai.onnx (the default domain), opset V   -> amanda/onnx/V
//   any other domain D, opset V             -> amanda/onnx/D/V   (e.g. amanda/onnx/ai.onnx.ml/3)
//
// Namespace V holds the schemas whose since_version is V; the registry's resolution (largest
// version <= V) then gives exactly libonnx's OpSchemaRegistry::Schema(op, V, domain).
#pragma once

#include <memory>
#include <string>

#include "amanda/ir/conventions.h"
#include "amanda/schema/registry.h"

namespace amanda::onnx_frontend {

std::shared_ptr<schema::Provider> make_onnx_namespace_provider();
// "" -> "amanda/onnx", "ai.onnx.ml" -> "amanda/onnx/ai.onnx.ml"
std::string onnx_namespace_family(const std::string& domain);
std::string onnx_namespace(const std::string& domain, int version);

// At exit, libonnx's operator registry is moved into an object never freed instead of being
// destroyed (registry_exit.cpp says why). For processes that exit normally (the Python module).
void keep_schema_registry_at_exit();

// Registers ONNX's conventions (amanda/ir/conventions.h): element type numbering "onnx"
// (TensorProto.DataType) and the constant op `Constant`.
void register_conventions(ir::Conventions& c);

}  // namespace amanda::onnx_frontend
