// libonnx's operator schemas, built one at a time when first asked for.
//
// libonnx builds its whole registry (about 2,000 OpSchema objects with their documentation,
// type constraints and function bodies) on the first OpSchemaRegistry::Schema call: 6-9 ms of
// CPU, more than everything else `amanda optimize` does on a small model. The schemas' builder
// functions are exported one per (domain, since version, op) — GetOpSchema<Abs_Onnx_ver6>() —
// and named in libonnx's operator_sets headers; CMake reads those headers into an index
// (build/generated/onnx_schema_index.inc), and schema() builds only the schema asked for.
// Answers are exactly OpSchemaRegistry::Schema(op, version, domain)'s (the latest since
// version <= version); ops of other domains go to the registry itself (tests/onnx/
// schema_index_test.cpp checks every op of every opset against it).
#pragma once

#include <string>

#include <onnx/defs/schema.h>

namespace amanda::onnx_frontend::detail {

const onnx::OpSchema* schema(const std::string& op, int version, const std::string& domain);

// How many schemas have been built so far (for the test that nothing else was built).
size_t built_schema_count();

}  // namespace amanda::onnx_frontend::detail
