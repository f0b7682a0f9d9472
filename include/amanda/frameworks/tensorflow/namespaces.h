// The TensorFlow namespaces: amanda/tensorflow/2.2, generated from TensorFlow's op registry, and
// amanda/tensorflow/tfjs/<version>, the ops TF.js's converter adds (_FusedConv2D, Prelu, ...),
// shipped as compact .tfops files under namespaces/tensorflow/ (scripts/gen_tf_namespaces.py;
// docs/tensorflow.md).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/schema/registry.h"

namespace amanda::tf_frontend {

// The namespace TensorFlow graphs are imported into, and the one of TF.js's own ops (a graph
// names it in its `imports` under the prefix kTfjsPrefix: op type `tfjs::_FusedConv2D`).
inline constexpr std::string_view kTensorflowNamespace = "amanda/tensorflow/2.2";
inline constexpr std::string_view kTfjsNamespace = "amanda/tensorflow/tfjs/4.22";
inline constexpr std::string_view kTfjsPrefix = "tfjs";

// Every namespaces/tensorflow/**/*.tfops file, by its path (tensorflow/tfjs/4.22.tfops is
// amanda/tensorflow/tfjs/4.22), read on first use.
std::shared_ptr<schema::Provider> make_tf_namespace_provider();

// Reads the compact form; `path` is used in errors (path:line). Compiled against `types`.
std::unique_ptr<schema::NamespaceSchema> read_tfops(std::string_view text, const std::string& path,
                                                    const schema::TypeSystems& types);

// A registry with only the TensorFlow namespaces (what the importer needs to name ports), built
// once per process and shared (loading is lazy and the registry is not changed afterwards).
schema::Registry& tf_registry();

}  // namespace amanda::tf_frontend
