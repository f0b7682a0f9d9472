// The property the TensorFlow fuzz target checks, shared with the gtest that replays its corpus
// (tests/tensorflow/fuzz_corpus_test.cpp). The first byte picks the reader: 'b' a binary GraphDef,
// 't' its text form, 'j' a TF.js model.json, a NUL byte, then the bytes every shard path it names
// reads; 's' a SavedModel: two 4-byte little-endian lengths, saved_model.pb, variables.index of
// those lengths, then the data shard. Any input is either refused with an amanda::ParseError/Error, or it imports, verifies
// without crashing, exports, re-imports to an equal graph (a TF.js manifest's shard paths replaced
// by the names the writer chose, see tfjs_shard_names_problem), and exports again to the same bytes.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "amanda_tf_graph.pb.h"

namespace amanda::fuzz {

// 's': import, export, import the written files: an equal graph, and the same files again.
inline std::string saved_model_roundtrip_problem(std::string_view body) {
  if (body.size() < 8) return "";
  auto u32 = [&](size_t at) {
    return uint32_t(uint8_t(body[at])) | uint32_t(uint8_t(body[at + 1])) << 8 | uint32_t(uint8_t(body[at + 2])) << 16 |
           uint32_t(uint8_t(body[at + 3])) << 24;
  };
  uint64_t a = u32(0), b = u32(4);
  if (8 + a + b > body.size()) return "";
  std::string_view pb = body.substr(8, a), index = body.substr(8 + a, b);
  auto data = make_buffer(std::string(body.substr(8 + a + b)));
  std::unique_ptr<text::Document> doc;
  try {
    doc = std::make_unique<text::Document>(tf_frontend::import_saved_model(pb, index, data, "sm"));
  } catch (const ParseError&) {
    return "";
  } catch (const Error&) {
    return "";
  }
  Diagnostics problems;
  ir::verify(doc->graph, problems);
  tf_frontend::SavedModelFiles files, twice;
  std::unique_ptr<text::Document> again;
  try {
    files = tf_frontend::export_saved_model(*doc);
  } catch (const std::exception& e) {
    return std::string("an imported SavedModel does not export: ") + e.what();
  }
  try {
    again = std::make_unique<text::Document>(
        tf_frontend::import_saved_model(files.saved_model_pb, files.index, make_buffer(files.data), "sm"));
  } catch (const std::exception& e) {
    return std::string("the exported SavedModel does not import: ") + e.what();
  }
  if (std::string d = ir::first_difference(doc->graph, again->graph); !d.empty())
    return "SavedModel export and re-import changed the graph: " + d;
  try {
    twice = tf_frontend::export_saved_model(*again);
  } catch (const std::exception& e) {
    return std::string("the re-imported SavedModel does not export: ") + e.what();
  }
  if (twice.saved_model_pb != files.saved_model_pb || twice.index != files.index || twice.data != files.data)
    return "the second SavedModel export is not identical to the first";
  return "";
}

// The TF.js writer names the shards itself (groupG-shardIofN.bin, TF.js's converter's names): a
// path read from the input never becomes a file name. So what a round trip must keep of the
// manifest is everything but the paths, and the paths the re-read model names must be exactly the
// shard files written, group by group, in order. Checks the written names, then puts them in
// place of the read paths in `doc`'s metadata, so that the graph comparison that follows checks
// all the rest (format, signature, weights, user metadata, the graph) unchanged.
inline std::string tfjs_shard_names_problem(text::Document& doc, const tf_frontend::TfjsFiles& files) {
  using ir::Value;
  std::vector<Value::List> groups;
  for (const auto& [name, bytes] : files.shards) {
    unsigned long g = 0, i = 0, n = 0;
    int used = 0;
    if (std::sscanf(name.c_str(), "group%lu-shard%luof%lu.bin%n", &g, &i, &n, &used) != 3 || size_t(used) != name.size() ||
        g == 0 || g > groups.size() + 1 || g < groups.size())
      return "the TF.js writer wrote a shard named '" + name + "', not groupG-shardIofN.bin in order";
    if (g > groups.size()) groups.emplace_back();
    Value::List& names = groups[g - 1];
    if (i != names.size() + 1 || i > n) return "the TF.js writer's shard '" + name + "' is out of order";
    names.push_back(Value(name));
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string last = groups[g].back().as_string();
    if (last.substr(last.find("of") + 2) != std::to_string(groups[g].size()) + ".bin")
      return "the TF.js writer's group " + std::to_string(g + 1) + " has " + std::to_string(groups[g].size()) +
             " shards, its last is named '" + last + "'";
  }
  ir::Graph& g = doc.graph;
  const Value* meta = g.attr(g.root(), g.symbols().find("tfjs"));
  if (!meta || !meta->is_map()) return "";
  const Value* manifest = meta->find("weightsManifest");
  if (!manifest || !manifest->is_list()) return "";
  if (manifest->as_list().size() != groups.size())
    return "the TF.js writer wrote shards for " + std::to_string(groups.size()) + " groups, the manifest has " +
           std::to_string(manifest->as_list().size());
  Value renamed = *meta;
  for (auto& e : renamed.as_map()) {
    if (e.key != "weightsManifest") continue;
    for (size_t gi = 0; gi < groups.size(); ++gi)
      for (auto& f : e.value.as_list()[gi].as_map())
        if (f.key == "paths") f.value = Value(groups[gi]);
  }
  g.set_attr(g.root(), g.sym("tfjs"), std::move(renamed));
  return "";
}

inline std::string tensorflow_roundtrip_problem(std::string_view input) {
  if (input.empty()) return "";
  char mode = input[0];
  if (mode == 's') return saved_model_roundtrip_problem(input.substr(1));
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
  if (mode == 'b') {
    // The wire reader (import_graph_bytes) against protobuf's parse and the message importer:
    // whatever the first accepts, protobuf accepts, and both give the same graph.
    tensorflow::GraphDef parsed;
    if (!parsed.ParseFromArray(body.data(), static_cast<int>(body.size())))
      return "the wire reader accepted bytes protobuf refuses";
    try {
      text::Document via_message = tf_frontend::import_graph(parsed);
      if (std::string d = ir::first_difference(via_message.graph, doc->graph); !d.empty())
        return "the wire reader and protobuf's message give different graphs: " + d;
    } catch (const std::exception& e) {
      return std::string("the message importer refuses what the wire reader took: ") + e.what();
    }
  }
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
  if (mode == 'j')
    if (std::string p = tfjs_shard_names_problem(*doc, files); !p.empty()) return p;
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
  if (mode == 'b') {
    // The bytes written straight from the IR are protobuf's deterministic serialisation.
    tensorflow::GraphDef whole;
    tf_frontend::export_graph(*doc, whole);
    std::string want;
    {
      google::protobuf::io::StringOutputStream s(&want);
      google::protobuf::io::CodedOutputStream c(&s);
      c.SetSerializationDeterministic(true);
      whole.SerializeToCodedStream(&c);
    }
    if (want != bytes) return "export_graph_bytes differs from protobuf's serialisation of export_graph";
  }
  return "";
}

}  // namespace amanda::fuzz
