// What the Python objects hold: a shared document and the id of one entity in it. An Op, Port,
// Edge or nested Graph keeps its document alive, so Python code can hold them after the Graph
// object that produced them is gone. Ids are stable and never reused; an id whose entity was
// erased is caught on every access (StaleError), never dereferenced.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "amanda/ir/graph.h"
#include "amanda/mapping/engine.h"
#include "amanda/text/document.h"

namespace amanda::python {

namespace py = pybind11;

struct DocHolder {
  text::Document doc;
  std::optional<mapping::Report> report;  // the conversion that produced this document, if any
  std::string source;                     // the file it was read from, if any
  explicit DocHolder(text::Document d) : doc(std::move(d)) {}
  ir::Graph& g() { return doc.graph; }
};
using DocPtr = std::shared_ptr<DocHolder>;

// An amanda error about an entity of a graph; Python sees amanda.GraphError with .path.
struct GraphError : std::runtime_error {
  std::string path;
  GraphError(std::string path, const std::string& msg)
      : std::runtime_error(path.empty() ? msg : path + ": " + msg), path(std::move(path)) {}
};

struct PyGraph {
  DocPtr d;
  ir::OpId scope;  // the root, an op with a body, or a graph held in an attribute
};
struct PyOp {
  DocPtr d;
  ir::OpId id;
};
struct PyPort {
  DocPtr d;
  ir::PortId id;
};
struct PyEdge {
  DocPtr d;
  ir::EdgeId id;
};

// Throws GraphError when the entity no longer exists.
ir::Graph& live(const PyGraph& g);
ir::Graph& live(const PyOp& o);
ir::Graph& live(const PyPort& p);
ir::Graph& live(const PyEdge& e);

// ---- values (values.cpp)
py::object to_python(const DocPtr& d, const ir::Value& v);
ir::Value from_python(const DocPtr& d, py::handle h, const std::string& where);
ir::Value from_python(const DocPtr& d, py::handle h, const std::string& where, int depth);
py::object tensor_to_numpy(const DocPtr& d, const std::shared_ptr<const ir::Tensor>& t);

// A whole-document copy (copy.cpp): same ops, ports, edges, attributes, bodies and attribute
// graphs; tensors are shared (they are immutable).
using text::copy_document;

// ---- registration of each part of the module
void register_values(py::module_& m);
void register_graph(py::module_& m);
void register_schema(py::module_& m);
void register_io(py::module_& m);

}  // namespace amanda::python
