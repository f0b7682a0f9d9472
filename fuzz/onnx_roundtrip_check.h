// The property the ONNX fuzz target checks, shared with the gtest that replays its corpus
// (tests/onnx/fuzz_corpus_test.cpp, so every build runs the corpus without clang): any input is
// either refused with an amanda::ParseError/Error, or it imports, verifies without crashing,
// exports, re-imports to an equal graph, and exports again to the same bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/frameworks/onnx/model.h"
#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"

namespace amanda::fuzz {

inline std::string onnx_roundtrip_problem(std::string_view input) {
  std::unique_ptr<text::Document> doc;
  try {
    doc = std::make_unique<text::Document>(onnx_frontend::import_model_bytes(input));  // no folder: external data is refused
  } catch (const ParseError&) {
    return "";  // refused: fine
  } catch (const Error&) {
    return "";
  }
  Diagnostics problems;
  ir::verify(doc->graph, problems);  // may report problems (e.g. a cycle); must not crash
  std::string bytes;
  try {
    bytes = onnx_frontend::export_model_bytes(*doc);
  } catch (const std::exception& e) {
    if (problems.has_errors()) return "";  // a structurally broken graph (a cycle): the writer refuses it, as it must
    return std::string("an imported model does not export: ") + e.what();
  }
  std::unique_ptr<text::Document> again;
  try {
    again = std::make_unique<text::Document>(onnx_frontend::import_model_bytes(bytes));
  } catch (const std::exception& e) {
    return std::string("the exported model does not import: ") + e.what();
  }
  if (std::string d = ir::first_difference(doc->graph, again->graph); !d.empty())
    return "export and re-import changed the graph: " + d;
  std::string twice;
  try {
    twice = onnx_frontend::export_model_bytes(*again);
  } catch (const std::exception& e) {
    return std::string("the re-imported model does not export: ") + e.what();
  }
  if (twice != bytes) return "the second export is not byte-identical to the first";
  return "";
}

}  // namespace amanda::fuzz
