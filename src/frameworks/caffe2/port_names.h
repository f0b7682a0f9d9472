// Port names of Caffe2 ops from the amanda/caffe2/1.13 schemas (X, filter, bias for Conv): a
// NetDef names no ports, its ops take blobs by position, and the mapping tables match ports by
// name. A variadic port's ports are NAME.0, NAME.1, ...; an op without a schema, or a position the
// schema does not reach, gets input.K / output.K.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>

#include "amanda/ir/graph.h"
#include "amanda/schema/schema.h"

namespace amanda::caffe2_frontend::detail {

class PortNamer {
 public:
  // `ns` null: the shipped amanda/caffe2/1.13, loaded once per process (none if it cannot be).
  explicit PortNamer(const schema::NamespaceSchema* ns);
  const schema::OpSchema* find(std::string_view type) const;
  Symbol input(const schema::OpSchema* s, int i, int n, ir::Graph& g) const { return name(s ? &s->inputs : nullptr, i, n, "input", g); }
  Symbol output(const schema::OpSchema* s, int i, int n, ir::Graph& g) const { return name(s ? &s->outputs : nullptr, i, n, "output", g); }

  // The ports' names per schema, made once: for the shipped namespace once per process, for a
  // caller's in this namer (expected_name() makes a string each time). A caller caches the symbols
  // (the importer: per op type and position), so that a name is interned once per graph.
  struct Names {
    std::vector<std::string> names;  // up to the first port without a fixed name
    int variadic = -1;               // index of the variadic port, if any
  };
  // (Stable for the namer's life: a caller may keep the pointer.)
  const Names* names_of(const std::vector<schema::PortSchema>* ports) const;
  // Port i's name from names_of's answer (null: the op has no schema): NAME, NAME.K or FALLBACK.K.
  static Symbol name_at(const Names* names, int i, const char* fallback, ir::Graph& g);
 private:
  const schema::NamespaceSchema* ns_;
  mutable absl::node_hash_map<const std::vector<schema::PortSchema>*, Names> own_;
  Symbol name(const std::vector<schema::PortSchema>* ports, int i, int n, const char* fallback, ir::Graph& g) const;
};

// The shipped namespace (null when it cannot be loaded).
const schema::NamespaceSchema* shipped_namespace();

}  // namespace amanda::caffe2_frontend::detail
