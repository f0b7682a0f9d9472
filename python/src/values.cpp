// Attribute values <-> Python objects, and tensors as NumPy arrays that borrow the tensor's bytes
// (from the heap, or from the mapped file the document was read from) instead of copying them.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "handles.h"

namespace amanda::python {

namespace {

// A tensor seen from Python: read-only, exports its bytes through the buffer protocol; holds the
// tensor (hence its buffer: a mapped file stays mapped) and the document.
struct PyTensor {
  DocPtr d;
  std::shared_ptr<const ir::Tensor> t;
};

// Each element type's struct-module format (what the buffer protocol and NumPy speak). bfloat16
// has no NumPy type: its elements are shown as their uint16 bit patterns.
struct DTypeFormat {
  ir::DType dtype;
  const char* format;
  char kind;  // NumPy's dtype.kind, for the way back
};
constexpr DTypeFormat kFormats[] = {
    {ir::DType::Bool, "?", 'b'},     {ir::DType::Int8, "b", 'i'},      {ir::DType::Int16, "h", 'i'},
    {ir::DType::Int32, "i", 'i'},    {ir::DType::Int64, "q", 'i'},     {ir::DType::UInt8, "B", 'u'},
    {ir::DType::UInt16, "H", 'u'},   {ir::DType::UInt32, "I", 'u'},    {ir::DType::UInt64, "Q", 'u'},
    {ir::DType::Float16, "e", 'f'},  {ir::DType::BFloat16, "H", 0},    {ir::DType::Float32, "f", 'f'},
    {ir::DType::Float64, "d", 'f'},  {ir::DType::Complex64, "Zf", 'c'}, {ir::DType::Complex128, "Zd", 'c'},
};

const char* format_of(ir::DType t) {
  for (const auto& f : kFormats)
    if (f.dtype == t) return f.format;
  return nullptr;
}

std::optional<ir::DType> dtype_of(char kind, size_t itemsize) {
  for (const auto& f : kFormats)
    if (f.kind == kind && ir::dtype_size(f.dtype) == itemsize) return f.dtype;
  return std::nullopt;
}

py::buffer_info buffer_of(const PyTensor& pt) {
  const ir::Tensor& t = *pt.t;
  const char* fmt = format_of(t.dtype);
  if (!fmt) throw py::type_error(std::string("a tensor of ") + std::string(ir::dtype_name(t.dtype)) + " has no buffer");
  auto need = t.expected_bytes();
  if (!need || *need != t.size)
    throw GraphError("", "the tensor's bytes (" + std::to_string(t.size) + ") do not match its shape and type");
  size_t item = ir::dtype_size(t.dtype);
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end()), strides(t.shape.size());
  py::ssize_t s = static_cast<py::ssize_t>(item);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  static const uint8_t empty = 0;  // a valid pointer for zero-sized tensors
  void* p = const_cast<uint8_t*>(t.data ? t.data : &empty);
  return py::buffer_info(p, static_cast<py::ssize_t>(item), fmt, static_cast<py::ssize_t>(shape.size()), shape, strides,
                         /*readonly=*/true);
}

py::object numpy_of(py::object self) {
  auto& pt = self.cast<PyTensor&>();
  const ir::Tensor& t = *pt.t;
  auto np = py::module_::import("numpy");
  if (t.dtype == ir::DType::String) {
    py::list l;
    for (const auto& s : t.strings) l.append(py::bytes(s));
    py::object a = np.attr("array")(l, "object");
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    return a.attr("reshape")(py::cast(shape));
  }
  py::buffer_info info = buffer_of(pt);
  py::array a(py::dtype(info), info.shape, info.strides, info.ptr, self);  // base = self: no copy
  a.attr("flags").attr("writeable") = false;
  return std::move(a);
}

ir::Tensor tensor_from_numpy(py::handle h, const std::string& where) {
  auto np = py::module_::import("numpy");
  py::object a = np.attr("asarray")(h);
  py::object dt = a.attr("dtype");
  char kind = dt.attr("kind").cast<std::string>()[0];
  size_t item = dt.attr("itemsize").cast<size_t>();
  std::vector<int64_t> shape = a.attr("shape").cast<std::vector<int64_t>>();
  if (kind == 'O' || kind == 'U' || kind == 'S') {
    ir::Tensor t;
    t.dtype = ir::DType::String;
    t.shape = shape;
    for (py::handle x : a.attr("ravel")()) {
      if (py::isinstance<py::bytes>(x)) t.strings.push_back(x.cast<std::string>());
      else if (py::isinstance<py::str>(x)) t.strings.push_back(x.cast<std::string>());
      else throw GraphError(where, "a tensor of objects holds bytes or str only");
    }
    return t;
  }
  auto d = dtype_of(kind, item);
  if (!d) throw GraphError(where, "NumPy dtype " + py::str(dt).cast<std::string>() + " has no Amanda element type");
  py::object le = np.attr("ascontiguousarray")(a, dt.attr("newbyteorder")("<"));
  std::string bytes = le.attr("tobytes")().cast<std::string>();
  return ir::Tensor::from_bytes(*d, std::move(shape), std::move(bytes));
}

py::str decode(const std::string& s) {
  // Names and strings are UTF-8; bytes that are not survive as surrogates (and go back unchanged).
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "surrogateescape"));
}

}  // namespace

py::object tensor_to_numpy(const DocPtr& d, const std::shared_ptr<const ir::Tensor>& t) {
  return numpy_of(py::cast(PyTensor{d, t}));
}

py::object to_python(const DocPtr& d, const ir::Value& v) {
  using K = ir::Value::Kind;
  switch (v.kind()) {
    case K::Null: return py::none();
    case K::Bool: return py::bool_(v.as_bool());
    case K::Int: return py::int_(v.as_int());
    case K::Float: return py::float_(v.as_float());
    case K::String: return decode(v.as_string());
    case K::List: {
      py::list l;
      for (const auto& x : v.as_list()) l.append(to_python(d, x));
      return std::move(l);
    }
    case K::Map: {
      py::dict m;
      for (const auto& e : v.as_map()) m[decode(e.key)] = to_python(d, e.value);
      return std::move(m);
    }
    case K::Tensor: return tensor_to_numpy(d, v.tensor_ptr());
    case K::Graph: return py::cast(PyGraph{d, v.as_graph()});
  }
  return py::none();
}

namespace {
// Deeper than any real attribute; a list that contains itself stops here instead of exhausting the stack.
constexpr int kMaxDepth = 256;
}  // namespace

ir::Value from_python(const DocPtr& d, py::handle h, const std::string& where) { return from_python(d, h, where, 0); }

ir::Value from_python(const DocPtr& d, py::handle h, const std::string& where, int depth) {
  if (depth > kMaxDepth) throw GraphError(where, "the value nests deeper than " + std::to_string(kMaxDepth) + " levels");
  if (h.is_none()) return ir::Value();
  if (py::isinstance<py::bool_>(h)) return ir::Value(h.cast<bool>());
  if (py::isinstance<PyTensor>(h)) return ir::Value(h.cast<PyTensor&>().t);
  if (py::isinstance<PyGraph>(h)) {
    auto& g = h.cast<PyGraph&>();
    if (g.d != d) throw GraphError(where, "a graph value must be a graph of the same document (Op.add_graph makes one)");
    return ir::Value::graph(g.scope);
  }
  if (py::isinstance<py::array>(h)) {
    // A 0-d NumPy scalar array stays a tensor: only Python and NumPy scalars become numbers.
    return ir::Value(tensor_from_numpy(h, where));
  }
  if (py::isinstance<py::int_>(h) || (PyIndex_Check(h.ptr()) && !py::isinstance<py::float_>(h))) {
    try {
      return ir::Value(py::int_(py::reinterpret_borrow<py::object>(h)).cast<int64_t>());
    } catch (const py::cast_error&) {
      throw GraphError(where, "integer out of the int64 range");
    }
  }
  if (py::isinstance<py::float_>(h) || py::hasattr(h, "__float__") && !py::isinstance<py::str>(h))
    return ir::Value(py::float_(py::reinterpret_borrow<py::object>(h)).cast<double>());
  if (py::isinstance<py::str>(h)) {
    PyObject* b = PyUnicode_AsEncodedString(h.ptr(), "utf-8", "surrogateescape");
    if (!b) throw py::error_already_set();
    auto bytes = py::reinterpret_steal<py::bytes>(b);
    return ir::Value(bytes.cast<std::string>());
  }
  if (py::isinstance<py::bytes>(h)) return ir::Value(h.cast<std::string>());
  if (py::isinstance<py::dict>(h)) {
    ir::Value::Map m;
    for (auto [k, v] : h.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k)) throw GraphError(where, "map keys are str");
      m.push_back({k.cast<std::string>(), from_python(d, v, where, depth + 1)});
    }
    return ir::Value(std::move(m));
  }
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    ir::Value::List l;
    for (py::handle x : h) l.push_back(from_python(d, x, where, depth + 1));
    return ir::Value(std::move(l));
  }
  throw GraphError(where, "cannot hold a value of Python type " + py::str(py::type::of(h).attr("__name__")).cast<std::string>());
}

void register_values(py::module_& m) {
  py::class_<PyTensor>(m, "Tensor", py::buffer_protocol(),
                       "A tensor: element type, shape and bytes (read-only). The bytes may live in the mapped file the "
                       "graph was read from; numpy() and the buffer protocol expose them without copying.")
      .def(py::init([](py::handle a) {
             return PyTensor{nullptr, std::make_shared<const ir::Tensor>(tensor_from_numpy(a, "Tensor"))};
           }),
           py::arg("array"), "A tensor holding a copy of a NumPy array (or anything numpy.asarray takes).")
      .def_buffer([](PyTensor& t) { return buffer_of(t); })
      .def_property_readonly("dtype", [](const PyTensor& t) { return std::string(ir::dtype_name(t.t->dtype)); })
      .def_property_readonly("shape", [](const PyTensor& t) { return py::tuple(py::cast(t.t->shape)); })
      .def_property_readonly("nbytes", [](const PyTensor& t) { return t.t->size; })
      .def_property_readonly("borrowed_from_file", [](const PyTensor& t) { return t.t->borrowed_from_file; },
                             "True when the bytes live in a mapped file (no copy was made when reading)")
      .def_property_readonly("address", [](const PyTensor& t) { return reinterpret_cast<uintptr_t>(t.t->data); },
                             "Where the bytes are in this process's memory")
      .def("numpy", [](py::object self) { return numpy_of(self); },
           "The tensor as a read-only NumPy array over the same bytes (strings: an object array, copied)")
      .def("__repr__", [](const PyTensor& t) {
        std::string s = "Tensor(" + std::string(ir::dtype_name(t.t->dtype)) + "[";
        for (size_t i = 0; i < t.t->shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.t->shape[i]);
        return s + "])";
      });
}

}  // namespace amanda::python
