// Caffe2 NetDefs <-> the graph abstraction (docs/caffe2.md). A predict net (binary `.pb` or text
// `.pbtxt`), with its init net when there is one, imports into one document whose root graph is in
// namespace amanda/caffe2/1.13: external inputs and outputs are graph ports, every blob version an
// SSA value (a blob written in place gets a fresh value name and its blob name in `@blob`), the
// init net's GivenTensor*Fill ops initializers of the graph inputs they fill, and every other field
// of both messages an attribute, so that export gives back the same bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "amanda/text/document.h"

namespace amanda::schema {
struct NamespaceSchema;
}

namespace amanda::caffe2_frontend {

inline constexpr std::string_view kCaffe2Namespace = "amanda/caffe2/1.13";

struct ImportOptions {
  std::string file_name = "<netdef>";       // for messages
  std::string init_file_name = "<init net>";
  // Port names come from the ops' schemas here (null: the shipped amanda/caffe2/1.13, or positional
  // names `input.K` / `output.K` when it cannot be loaded).
  const schema::NamespaceSchema* schema = nullptr;
  // Read binary nets straight from the wire where they allow it (false: always through protobuf;
  // the fuzz target checks that both give the same graph).
  bool wire = true;
};

// A NetDef in either form. `text`: protobuf's text format (what `.pbtxt` holds).
struct NetBytes {
  std::string_view bytes;
  bool text = false;
};

// Throws amanda::Error naming the file and the op (`predict_net.pb: op #3 (Conv): ...`).
text::Document import_net(NetBytes predict, std::optional<NetBytes> init, const ImportOptions& options = {});

struct ExportedNet {
  std::string predict;
  std::optional<std::string> init;  // when the graph has initializers or kept an init net
};
// Throws amanda::Error when the graph cannot be written as a NetDef (an op input without an edge,
// an attribute value no Argument field holds, ...).
ExportedNet export_net(const text::Document& doc, bool text, bool wire = true);

// Whether bytes look like a NetDef: binary (its first fields parse as NetDef fields and an op's
// type is a string) or text (a `name:`/`op {`/`external_input:` field at the top level).
bool looks_like_netdef(std::string_view head, bool text);

}  // namespace amanda::caffe2_frontend
