// TF.js graph models <-> the graph abstraction (docs/tensorflow.md, "TF.js graph models"):
// model.json (the GraphDef as protobuf JSON in `modelTopology`, the signature and other metadata,
// the weights manifest) plus its .bin shards. Weights become the `value` of their Const ops
// (dequantised as TF.js does); export writes the same manifest and shard bytes back.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "amanda/support/file.h"
#include "amanda/support/gate.h"
#include "amanda/text/document.h"

namespace amanda::tf_frontend {

// Gives the bytes of a shard named by a manifest path (already checked: relative, no '..').
using ShardLoader = std::function<std::shared_ptr<const Buffer>(const std::string& path)>;

// Throws amanda::ParseError / amanda::Error naming the file, the manifest entry or the node.
text::Document import_tfjs(std::string_view model_json, const ShardLoader& shards, const std::string& file_name = "model.json");
// Reads model.json and the shards next to it (memory-mapped; unquantised weights are borrowed).
text::Document read_tfjs(ReadGate& files);  // model.json and its shards, through the gate
text::Document read_tfjs(const std::string& path);

struct TfjsFiles {
  std::string model_json;
  std::vector<std::pair<std::string, std::string>> shards;  // manifest path -> bytes
};
TfjsFiles export_tfjs(const text::Document& doc);
// Writes model.json and its shards (each atomically) into path's folder.
// Stages model.json (out.main()) and the shards, named by the writer; the caller commits.
void write_tfjs(const text::Document& doc, WriteGate& out);
void write_tfjs(const text::Document& doc, const std::string& path);

// A .json file whose top-level object is a TF.js model (it has `modelTopology`), not an Amanda
// document (whose first key is graph, op or edge).
bool is_tfjs_file(const std::string& path);
// The same test on the first bytes of a .json file (format detection through the gate).
bool is_tfjs_head(std::string_view head);
// Where the tool writes a TF.js graph model: a file named model.json.
bool is_tfjs_output_path(std::string_view path);

}  // namespace amanda::tf_frontend
