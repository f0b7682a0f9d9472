// The property the TensorFlow fuzz target checks, shared with the gtest that replays its corpus
// (tests/tensorflow/fuzz_corpus_test.cpp). The first byte picks the reader: 'b' a binary GraphDef,
// 't' its text form, 'j' a TF.js model.json, a NUL byte, then the bytes every shard path it names
// reads. Any input is either refused with an amanda::ParseError/Error, or it imports, verifies
// without crashing, exports, re-imports to an equal graph, and exports again to the same bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/frontends/tensorflow/graphdef.h"
#include "amanda/frontends/tensorflow/tfjs.h"
#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"

namespace amanda::fuzz {

inline std::string tensorflow_roundtrip_problem(std::string_view input) {
  if (input.empty()) return "";
  char mode = input[0];
  std::string_view body = input.substr(1);
  std::shared_ptr<const Buffer> shard = make_buffer("");
  if (mode == 'j') {
    size_t z = body.find('\0');
    if (z != std::string_view::npos) {
      shard = make_buffer(std::string(body.substr(z + 1)));
      body = body.substr(0, z);
    }
  }
  tf_frontend::ShardLoader loader = [&](const std::string&) { return shard; };
  auto import = [&](std::string_view bytes) {
    if (mode == 't') return tf_frontend::import_graph_text(bytes);
    if (mode == 'j') return tf_frontend::import_tfjs(bytes, loader);
    return tf_frontend::import_graph_bytes(bytes);
  };
  std::unique_ptr<text::Document> doc;
  try {
    doc = std::make_unique<text::Document>(import(body));
  } catch (const ParseError&) {
    return "";
  } catch (const Error&) {
    return "";
  }
  Diagnostics problems;
  ir::verify(doc->graph, problems);
  // Export in the same form, then import that again (a TF.js model: from the written shards).
  std::string bytes;
  tf_frontend::TfjsFiles files;
  try {
    if (mode == 'j') {
      files = tf_frontend::export_tfjs(*doc);
      bytes = files.model_json;
    } else {
      bytes = mode == 't' ? tf_frontend::export_graph_text(*doc) : tf_frontend::export_graph_bytes(*doc);
    }
  } catch (const std::exception& e) {
    return std::string("an imported graph does not export: ") + e.what();
  }
  std::unique_ptr<text::Document> again;
  try {
    if (mode == 'j') {
      tf_frontend::ShardLoader written = [&](const std::string& p) -> std::shared_ptr<const Buffer> {
        for (const auto& [rel, b] : files.shards)
          if (rel == p) return make_buffer(b);
        return nullptr;
      };
      again = std::make_unique<text::Document>(tf_frontend::import_tfjs(bytes, written));
    } else {
      again = std::make_unique<text::Document>(import(bytes));
    }
  } catch (const std::exception& e) {
    return std::string("the exported graph does not import: ") + e.what();
  }
  if (std::string d = ir::first_difference(doc->graph, again->graph); !d.empty())
    return "export and re-import changed the graph: " + d;
  std::string twice;
  try {
    if (mode == 'j') twice = tf_frontend::export_tfjs(*again).model_json;
    else twice = mode == 't' ? tf_frontend::export_graph_text(*again) : tf_frontend::export_graph_bytes(*again);
  } catch (const std::exception& e) {
    return std::string("the re-imported graph does not export: ") + e.what();
  }
  if (twice != bytes) return "the second export is not identical to the first";
  return "";
}

}  // namespace amanda::fuzz
