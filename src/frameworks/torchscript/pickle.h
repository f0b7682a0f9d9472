// An unpickler for the pickles inside TorchScript archives (data.pkl, constants.pkl, and the
// pickles of older formats): Python pickle protocols 0-5 as far as torch.jit.save and
// torch.save write them. It builds a generic object tree and calls nothing: GLOBAL names a class
// or function, REDUCE / NEWOBJ record a call, BUILD records an object's state, BINPERSID records
// a persistent id. The TorchScript importer interprets the tree (torch._utils._rebuild_tensor_v2
// calls, __torch__.* module objects, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace amanda::torchscript {

struct PyObject;
using PyRef = std::shared_ptr<PyObject>;

struct PyObject {
  enum class Kind : uint8_t {
    None, Bool, Int, Float, Str, Bytes,
    Tuple, List, Dict,
    Global,      // str = "module.qualname" (GLOBAL 'torch._utils _rebuild_tensor_v2' -> "torch._utils._rebuild_tensor_v2")
    Call,        // REDUCE: callee(args...); NEWOBJ: callee.__new__(callee, args...) (new_object = true)
    PersistentId // BINPERSID / PERSID: items[0] = the id object
  };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;      // Int (LONG values that do not fit in int64 are an error)
  double f = 0;
  std::string str;    // Str (UTF-8), Bytes, Global name
  // Tuple / List: the elements. Call: items[0] = callee, items[1] = args (a Tuple).
  // PersistentId: items[0] = the id.
  std::vector<PyRef> items;
  std::vector<std::pair<PyRef, PyRef>> dict;  // Dict: entries in insertion order
  bool new_object = false;  // Call made by NEWOBJ / NEWOBJ_EX
  PyRef state;              // Call: what BUILD gave it (nullptr when no BUILD)
  // Where the object was made, for error messages: the byte offset of its opcode.
  uint64_t offset = 0;
};

struct UnpickleLimits {
  size_t max_depth = 1000;         // nesting of containers / calls
  // Objects created: a real archive's data.pkl makes about ten per tensor (10^5 for a large model);
  // each costs about 250 bytes, also charged to the run's Memory budget.
  size_t max_objects = 4'000'000;
};

// Unpickles `bytes`; `name` is used in errors ("archive/data.pkl: byte 123: unknown opcode 0xff").
// Throws amanda::Error for anything malformed: unknown opcodes, stack underflow, a MARK missing,
// memo keys never put, truncated input, trailing garbage after STOP is allowed (ignored).
// Never crashes, never reads out of bounds, never loops forever (memo references are shared
// pointers; a pickle that makes a cycle through BUILD/APPENDS yields a cyclic tree, which callers
// must walk with a depth limit).
PyRef unpickle(std::string_view bytes, const std::string& name, const UnpickleLimits& limits = {});

// Frees a tree that may be cyclic (unpickle leaves cycles to its caller): every reference is
// moved out of its object once, without recursion.
void dismantle(PyRef root);

// Helpers for consumers.
const char* kind_name(PyObject::Kind k);
// A short, bounded rendering for error messages: "Call(torch._utils._rebuild_tensor_v2, (...))".
std::string describe(const PyObject& o, int depth = 2);

}  // namespace amanda::torchscript
