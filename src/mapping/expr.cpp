#include "amanda/mapping/expr.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "amanda/ir/attr_lookup.h"
#include "amanda/ir/conventions.h"
#include "amanda/ir/tensor.h"
#include "amanda/ir/types.h"
#include "amanda/support/float16.h"
#include "amanda/support/budget.h"

namespace amanda::mapping {

using ir::Value;

namespace {

// ---------------------------------------------------------------- the step budget
// Each evaluation of an expression (from the outermost eval() in) may take ExprSteps steps: a
// node evaluated, a list element made. Counted per expression, not per run, so that a large model
// (many ops, many rules) never runs out while one hostile expression (repeat of repeat, a huge
// range) stops at once, before its lists are allocated.
struct EvalCounter {
  uint32_t depth = 0;
  uint64_t steps = 0;
};
thread_local EvalCounter eval_counter;

void charge_steps(uint64_t n, const char* what) {
  EvalCounter& c = eval_counter;
  uint64_t limit = Budget::run().limits().expr_steps;
  if (n > limit || c.steps > limit - n) Budget::run().exceeded(BudgetKind::ExprSteps, n, std::string("table expression: ") + what);
  c.steps += n;
}

class EvalScope {
 public:
  EvalScope() {
    if (eval_counter.depth++ == 0) eval_counter.steps = 0;
  }
  ~EvalScope() { --eval_counter.depth; }
};

// Values a copy of v makes (v and everything in its lists), counted up to `cap` and no further.
uint64_t weight(const Value& v, uint64_t cap) {
  uint64_t n = 0;
  std::vector<const Value*> work{&v};
  while (!work.empty() && n <= cap) {
    const Value* x = work.back();
    work.pop_back();
    ++n;
    if (x->is_list())
      for (const Value& e : x->as_list()) work.push_back(&e);
  }
  return n;
}

// Checked integer arithmetic: an overflow is an evaluation error, never a wrapped value or SIGFPE.
int64_t int_op(int64_t x, int64_t y, char op) {
  int64_t r = 0;
  if (op == '+') {
    if (__builtin_add_overflow(x, y, &r)) throw EvalError(fmt::format("{} + {} overflows int64", x, y));
    return r;
  }
  if (op == '-') {
    if (__builtin_sub_overflow(x, y, &r)) throw EvalError(fmt::format("{} - {} overflows int64", x, y));
    return r;
  }
  if (op == '*') {
    if (__builtin_mul_overflow(x, y, &r)) throw EvalError(fmt::format("{} * {} overflows int64", x, y));
    return r;
  }
  if (y == 0) throw EvalError("division by zero");
  if (y == -1) {  // INT64_MIN / -1 traps (SIGFPE); x % -1 is 0 for every x
    if (op == '%') return 0;
    if (x == std::numeric_limits<int64_t>::min()) throw EvalError(fmt::format("{} / -1 overflows int64", x));
    return -x;
  }
  int64_t q = x / y, m = x % y;
  if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;  // floor division, like Python's //
  return op == '/' ? q : m;
}

// ---------------------------------------------------------------- values

bool is_number(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }
double num(const Value& v) {
  if (v.is_int()) return double(v.as_int());
  if (v.is_float()) return v.as_float();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  throw EvalError("expected a number, got " + value_str(v));
}
int64_t to_int(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool();
  if (v.is_float() && std::floor(v.as_float()) == v.as_float()) {
    // [-2^63, 2^63): outside it (or NaN/inf, which the floor test lets through as inf) a float
    // has no int64 value, and converting it would be undefined behaviour.
    double d = v.as_float();
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return int64_t(d);
    throw EvalError("the number " + value_str(v) + " is outside the 64-bit integer range");
  }
  throw EvalError("expected an integer, got " + value_str(v));
}
const Value::List& to_list(const Value& v, const char* what) {
  if (!v.is_list()) throw EvalError(std::string(what) + ": expected a list, got " + value_str(v));
  return v.as_list();
}
const std::string& to_string(const Value& v, const char* what) {
  if (!v.is_string()) throw EvalError(std::string(what) + ": expected a string, got " + value_str(v));
  return v.as_string();
}
bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null: return false;
    case Value::Kind::Bool: return v.as_bool();
    case Value::Kind::Int: return v.as_int() != 0;
    case Value::Kind::Float: return v.as_float() != 0;
    case Value::Kind::String: return !v.as_string().empty();
    case Value::Kind::List: return !v.as_list().empty();
    default: return true;
  }
}
// Equality that lets 1 == 1.0 and compares lists element by element the same way.
bool same(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b) && !(a.is_bool() && b.is_bool())) return num(a) == num(b);
  if (a.is_list() && b.is_list()) {
    const auto &x = a.as_list(), &y = b.as_list();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same(x[i], y[i])) return false;
    return true;
  }
  return a == b;
}

// ---------------------------------------------------------------- tensors

ir::DType dtype_arg(const Value& v) {
  auto t = ir::dtype_from_name(to_string(v, "dtype"));
  if (!t || *t == ir::DType::String || *t == ir::DType::Undefined) throw EvalError("unknown element type " + value_str(v));
  return *t;
}

template <class T>
void put(std::string& out, T x) {
  out.append(reinterpret_cast<const char*>(&x), sizeof x);
}

Value make_tensor(const Value& x, ir::DType dt) {
  std::vector<int64_t> shape;
  std::vector<Value> elems;
  if (x.is_list()) {
    shape.push_back(int64_t(x.as_list().size()));
    elems = x.as_list();
  } else if (x.is_tensor()) {
    return x;
  } else {
    elems.push_back(x);
  }
  std::string bytes;
  for (const Value& e : elems) {
    switch (dt) {
      case ir::DType::Bool: put<uint8_t>(bytes, truthy(e)); break;
      case ir::DType::Int8: put<int8_t>(bytes, int8_t(to_int(e))); break;
      case ir::DType::Int16: put<int16_t>(bytes, int16_t(to_int(e))); break;
      case ir::DType::Int32: put<int32_t>(bytes, int32_t(to_int(e))); break;
      case ir::DType::Int64: put<int64_t>(bytes, to_int(e)); break;
      case ir::DType::UInt8: put<uint8_t>(bytes, uint8_t(to_int(e))); break;
      case ir::DType::UInt16: put<uint16_t>(bytes, uint16_t(to_int(e))); break;
      case ir::DType::UInt32: put<uint32_t>(bytes, uint32_t(to_int(e))); break;
      case ir::DType::UInt64: put<uint64_t>(bytes, uint64_t(to_int(e))); break;
      case ir::DType::Float32: put<float>(bytes, float(num(e))); break;
      case ir::DType::Float64: put<double>(bytes, num(e)); break;
      case ir::DType::Float16: put<uint16_t>(bytes, float_to_half(float(num(e)))); break;
      case ir::DType::BFloat16: put<uint16_t>(bytes, float_to_bf16(float(num(e)))); break;
      default: throw EvalError("tensor(): element type " + std::string(ir::dtype_name(dt)) + " is not supported");
    }
  }
  return Value(ir::Tensor::from_bytes(dt, std::move(shape), std::move(bytes)));
}

// The elements of a tensor as a list of ints/floats/bools.
Value::List tensor_elems(const ir::Tensor& t) {
  Value::List out;
  if (t.dtype == ir::DType::String) {
    for (const auto& s : t.strings) out.emplace_back(s);
    return out;
  }
  size_t w = ir::dtype_size(t.dtype);
  if (!w) throw EvalError("a tensor of " + std::string(ir::dtype_name(t.dtype)) + " has no elements to read");
  size_t n = t.size / w;
  const uint8_t* p = t.data;
  auto rd = [&](auto tag, size_t i) {
    decltype(tag) x;
    std::memcpy(&x, p + i * sizeof x, sizeof x);
    return x;
  };
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case ir::DType::Bool: out.emplace_back(bool(p[i])); break;
      case ir::DType::Int8: out.emplace_back(int64_t(rd(int8_t{}, i))); break;
      case ir::DType::Int16: out.emplace_back(int64_t(rd(int16_t{}, i))); break;
      case ir::DType::Int32: out.emplace_back(int64_t(rd(int32_t{}, i))); break;
      case ir::DType::Int64: out.emplace_back(rd(int64_t{}, i)); break;
      case ir::DType::UInt8: out.emplace_back(int64_t(p[i])); break;
      case ir::DType::UInt16: out.emplace_back(int64_t(rd(uint16_t{}, i))); break;
      case ir::DType::UInt32: out.emplace_back(int64_t(rd(uint32_t{}, i))); break;
      case ir::DType::UInt64: out.emplace_back(int64_t(rd(uint64_t{}, i))); break;
      case ir::DType::Float32: out.emplace_back(double(rd(float{}, i))); break;
      case ir::DType::Float64: out.emplace_back(rd(double{}, i)); break;
      case ir::DType::Float16: out.emplace_back(double(half_to_float(rd(uint16_t{}, i)))); break;
      case ir::DType::BFloat16: {
        uint32_t u = uint32_t(rd(uint16_t{}, i)) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        out.emplace_back(double(f));
        break;
      }
      default: throw EvalError("cannot read the elements of a " + std::string(ir::dtype_name(t.dtype)) + " tensor");
    }
  }
  return out;
}

const ir::Tensor& to_tensor(const Value& v, const char* what) {
  if (!v.is_tensor()) throw EvalError(std::string(what) + ": expected a tensor, got " + value_str(v));
  return v.as_tensor();
}

// A framework's element-type numbering, as its frontend registered it (amanda/ir/conventions.h).
const ir::DTypeCodes& dtype_table(const Value& system) {
  const std::string& s = to_string(system, "element type system");
  if (const ir::DTypeCodes* t = ir::conventions().dtype_codes(s)) return *t;
  std::string known;
  for (const auto& n : ir::conventions().dtype_systems()) known += (known.empty() ? "" : ", ") + n;
  throw EvalError("unknown element type system '" + s + "' (registered: " + (known.empty() ? "none" : known) +
                  "; each frontend registers its own, io::install_conventions() every built-in one)");
}

// ---------------------------------------------------------------- ports

// The port whose value `p` is: an op input reads its producer's. A body reading a value around it
// reads it through a capture port of the op that holds the body (If, Loop): the value is the outer
// one. Null when nothing feeds the input.
ir::PortId value_port(const ir::Graph& g, ir::PortId p) {
  if (g.port_dir(p) == ir::PortDir::In && g.port_op(p) != g.root()) {
    ir::PortId src = g.producer(p);
    if (!src) return {};
    p = src;
    while (g.port_dir(p) == ir::PortDir::In && p && g.port_op(p) != g.root() && !g.is_graph(g.port_op(p)))
      if (!(p = g.producer(p))) return {};
  }
  return p;
}

// The graph output ports an op output feeds (ONNX gives a value's info on the graph's output).
template <class F>
const Value* on_graph_outputs(const ir::Graph& g, ir::PortId p, F&& f) {
  if (g.port_dir(p) == ir::PortDir::Out && g.port_op(p) != g.root() && !g.is_graph(g.port_op(p)))
    for (ir::EdgeId x = g.first_out_edge(p); x; x = g.next_out_edge(x)) {
      ir::PortId d = g.edge_dst(x);
      ir::OpId o = g.port_op(d);
      if (o != g.root() && !g.is_graph(o)) continue;
      if (const Value* v = f(d)) return v;
    }
  return nullptr;
}

// A tensor type with a known element type on the value's port (else on the graph output it
// feeds): the one source of truth for types in memory (amanda/ir/types.h).
const ir::TypeData* tensor_type(const ir::Graph& g, ir::PortId p) {
  auto of = [&](ir::PortId q) -> const ir::TypeData* {
    if (!g.port_type(q)) return nullptr;
    const ir::TypeData& td = g.port_type_data(q);
    return td.kind == ir::TypeKind::Tensor && td.elem != ir::ElemType::Undefined ? &td : nullptr;
  };
  if (const ir::TypeData* td = of(p)) return td;
  static const Value kFound;
  const ir::TypeData* found = nullptr;
  on_graph_outputs(g, p, [&](ir::PortId d) -> const Value* {
    found = of(d);
    return found ? &kFound : nullptr;
  });
  return found;
}

// The spelled type of a value whose TypeId says no tensor type (a sequence, a sparse tensor, a
// type no TypeId holds): the `@key`/`key` attribute a reader kept.
const Value* port_info(const ir::Graph& g, ir::PortId p, std::string_view key) {
  std::string at = "@" + std::string(key);
  auto get = [&](ir::PortId q) -> const Value* {
    if (const Value* v = ir::get_attr(g, q, at)) return v;
    return ir::get_attr(g, q, key);
  };
  if (const Value* v = get(p)) return v;
  return on_graph_outputs(g, p, get);
}

ir::PortId port_arg(const Expr& e, const Bindings& b, const char* fn) {
  if (e.kind == Expr::Kind::Index && e.args[0]->kind == Expr::Kind::Ref) {
    // xs[k]: port k of a list capture (ref: xs...), bound as "xs[k]"; negative k from the end
    const std::string& name = e.args[0]->name;
    const Value* list = b.get(name);
    if (!list || !list->is_list()) throw EvalError(std::string(fn) + "(): '" + name + "' is not a list capture (ref: " + name + "...)");
    Value idx = e.args[1]->eval(b);
    if (!idx.is_int()) throw EvalError(std::string(fn) + "(): the index of '" + name + "' is not an integer");
    int64_t k = idx.as_int(), n = int64_t(list->as_list().size());
    if (k < 0) k += n;
    if (k < 0 || k >= n) throw EvalError(std::string(fn) + "(): index out of range of '" + name + "' (" + std::to_string(n) + " ports)");
    auto p = b.port(name + "[" + std::to_string(k) + "]");
    if (!p || !b.graph) throw EvalError(std::string(fn) + "(): '" + name + "' is not a captured port list");
    return *p;
  }
  if (e.kind != Expr::Kind::Ref) throw EvalError(std::string(fn) + "() takes a port ref");
  auto p = b.port(e.name);
  if (!p || !b.graph) throw EvalError(std::string(fn) + "(): '" + e.name + "' is not a captured port");
  return *p;
}

// ---------------------------------------------------------------- functions

using Args = std::vector<Value>;
}  // namespace

struct ExprFunction {
  std::string signature, doc;
  int min_args, max_args;  // max -1: any
  std::function<Value(const std::vector<Value>&)> eval;
  // Given the result and the other (bound) arguments, the value of argument 0; nullopt when no
  // argument 0 gives this result.
  std::function<std::optional<Value>(const Value&, const std::vector<Value>&)> inverse;
  bool takes_ports = false;  // evaluated by special code with the Expr args
};

namespace {

using Fn = ExprFunction;

// The arithmetic operators are one character each: '+', '-', '*', '/', '%'.
Value elementwise(const Value& a, const Value& b, char op);

Value arith(const Value& a, const Value& b, char op) {
  if (a.is_list() || b.is_list()) return elementwise(a, b, op);
  if (a.is_string() && b.is_string() && op == '+') return Value(a.as_string() + b.as_string());
  if (a.is_int() && b.is_int()) return Value(int_op(a.as_int(), b.as_int(), op));
  double x = num(a), y = num(b);
  if (op == '+') return Value(x + y);
  if (op == '-') return Value(x - y);
  if (op == '*') return Value(x * y);
  if (op == '/') return Value(x / y);
  return Value(std::fmod(x, y));
}

Value elementwise(const Value& a, const Value& b, char op) {
  Value::List out;
  if (a.is_list() && b.is_list()) {
    if (a.as_list().size() != b.as_list().size())
      throw EvalError(fmt::format("'{}' of lists of different lengths ({} and {})", op, a.as_list().size(), b.as_list().size()));
    for (size_t i = 0; i < a.as_list().size(); ++i) out.push_back(arith(a.as_list()[i], b.as_list()[i], op));
  } else if (a.is_list()) {
    for (const Value& x : a.as_list()) out.push_back(arith(x, b, op));
  } else {
    for (const Value& x : b.as_list()) out.push_back(arith(a, x, op));
  }
  return Value(std::move(out));
}

const std::map<std::string, Fn, std::less<>>& registry() {
  static const std::map<std::string, Fn, std::less<>> fns = [] {
    std::map<std::string, Fn, std::less<>> m;
    m["len"] = {"len(x)", "elements of a list, characters of a string, elements of a tensor", 1, 1, [](const Args& a) {
                  if (a[0].is_list()) return Value(int64_t(a[0].as_list().size()));
                  if (a[0].is_string()) return Value(int64_t(a[0].as_string().size()));
                  if (a[0].is_tensor()) return Value(int64_t(a[0].as_tensor().element_count().value_or(0)));
                  throw EvalError("len(): expected a list, string or tensor, got " + value_str(a[0]));
                }};
    m["default"] = {"default(x, d)", "x, or d when x is missing (null)", 2, 2,
                    [](const Args& a) { return a[0].is_null() ? a[1] : a[0]; },
                    [](const Value& r, const Args&) -> std::optional<Value> { return r; }};
    m["has"] = {"has(x)", "true when x is present (not null)", 1, 1, [](const Args& a) { return Value(!a[0].is_null()); }};
    m["if"] = {"if(c, a, b)", "a when c holds, else b", 3, 3, [](const Args& a) { return truthy(a[0]) ? a[1] : a[2]; }};
    m["all"] = {"all(list[, v])", "every element equals v (or, without v, is true); true for an empty or missing list", 1, 2,
                [](const Args& a) {
                  if (a[0].is_null()) return Value(true);
                  for (const Value& x : to_list(a[0], "all()"))
                    if (a.size() == 2 ? !same(x, a[1]) : !truthy(x)) return Value(false);
                  return Value(true);
                }};
    m["any"] = {"any(list[, v])", "some element equals v (or, without v, is true)", 1, 2, [](const Args& a) {
                  if (a[0].is_null()) return Value(false);
                  for (const Value& x : to_list(a[0], "any()"))
                    if (a.size() == 2 ? same(x, a[1]) : truthy(x)) return Value(true);
                  return Value(false);
                }};
    m["at"] = {"at(list, i[, default])", "element i (negative counts from the end); default when out of range or missing", 2, 3,
               [](const Args& a) {
                 if (a[0].is_null() && a.size() == 3) return a[2];
                 const auto& l = to_list(a[0], "at()");
                 int64_t i = to_int(a[1]);
                 if (i < 0) i += int64_t(l.size());
                 if (i < 0 || i >= int64_t(l.size())) {
                   if (a.size() == 3) return a[2];
                   throw EvalError(fmt::format("at(): index {} is out of range for {} elements", to_int(a[1]), l.size()));
                 }
                 return l[size_t(i)];
               }};
    m["find"] = {"find(s, x)", "the index of x in list or string s, or -1", 2, 2, [](const Args& a) {
                   if (a[0].is_string()) {
                     size_t k = a[0].as_string().find(to_string(a[1], "find()"));
                     return Value(k == std::string::npos ? int64_t(-1) : int64_t(k));
                   }
                   const auto& l = to_list(a[0], "find()");
                   for (size_t i = 0; i < l.size(); ++i)
                     if (same(l[i], a[1])) return Value(int64_t(i));
                   return Value(int64_t(-1));
                 }};
    m["value_map"] = {"value_map(x, from1, to1, from2, to2, ...[, default])",
                      "maps x by the pairs; an odd last argument is the default for other values", 3, -1,
                      [](const Args& a) {
                        for (size_t i = 1; i + 1 < a.size(); i += 2)
                          if (same(a[0], a[i])) return a[i + 1];
                        if (a.size() % 2 == 0) return a.back();
                        throw EvalError("value_map(): no entry for " + value_str(a[0]));
                      },
                      [](const Value& r, const Args& a) -> std::optional<Value> {
                        for (size_t i = 1; i + 1 < a.size(); i += 2)
                          if (same(r, a[i + 1])) return a[i];
                        return std::nullopt;
                      }};
    m["permute"] = {"permute(list, perm)", "out[i] = list[perm[i]] (NCHW <-> NHWC orders)", 2, 2,
                    [](const Args& a) {
                      const auto &l = to_list(a[0], "permute()"), &p = to_list(a[1], "permute()");
                      if (l.size() != p.size()) throw EvalError(fmt::format("permute(): {} elements, {} in perm", l.size(), p.size()));
                      Value::List out;
                      for (const Value& i : p) {
                        int64_t k = to_int(i);
                        if (k < 0 || k >= int64_t(l.size())) throw EvalError("permute(): bad perm index");
                        out.push_back(l[size_t(k)]);
                      }
                      return Value(std::move(out));
                    },
                    [](const Value& r, const Args& a) -> std::optional<Value> {
                      const auto &l = to_list(r, "permute()"), &p = to_list(a[1], "permute()");
                      if (l.size() != p.size()) return std::nullopt;
                      Value::List out(l.size());
                      for (size_t i = 0; i < p.size(); ++i) out[size_t(to_int(p[i]))] = l[i];
                      return Value(std::move(out));
                    }};
    m["concat"] = {"concat(a, b, ...)", "the lists one after another", 1, -1, [](const Args& a) {
                     Value::List out;
                     for (const Value& x : a) {
                       if (x.is_null()) continue;
                       if (x.is_list()) out.insert(out.end(), x.as_list().begin(), x.as_list().end());
                       else out.push_back(x);
                     }
                     return Value(std::move(out));
                   }};
    m["slice"] = {"slice(list, begin[, end])", "elements begin..end-1 (negative counts from the end)", 2, 3, [](const Args& a) {
                    const auto& l = to_list(a[0], "slice()");
                    int64_t n = int64_t(l.size()), b = to_int(a[1]), e = a.size() == 3 ? to_int(a[2]) : n;
                    if (b < 0) b += n;
                    if (e < 0) e += n;
                    b = std::clamp<int64_t>(b, 0, n);
                    e = std::clamp<int64_t>(e, b, n);
                    return Value(Value::List(l.begin() + b, l.begin() + e));
                  }};
    m["repeat"] = {"repeat(x, n)", "a list of n copies of x", 2, 2, [](const Args& a) {
                     int64_t n = to_int(a[1]);
                     if (n < 0) throw EvalError("repeat(): a negative count");
                     // Every copy copies x's lists too: repeat(repeat(1, 2^20), 2^20) is 2^40 values.
                     uint64_t per = weight(a[0], Budget::run().limits().expr_steps);
                     if (n > 0 && per > std::numeric_limits<uint64_t>::max() / uint64_t(n)) charge_steps(std::numeric_limits<uint64_t>::max(), "repeat()");
                     charge_steps(uint64_t(n) * per, "repeat()");
                     // And its bytes: n copies of a long string fit the step budget but not memory
                     // (then SIGSEGV at the allocator's cap); checked before the list is made.
                     uint64_t each = sizeof(Value) + (a[0].is_string() ? a[0].as_string().size() : 0);
                     Budget::run().check(BudgetKind::Memory, checked_mul(uint64_t(n), each, "repeat()"), "table expression: repeat()");
                     return Value(Value::List(size_t(n), a[0]));
                   }};
    m["reverse"] = {"reverse(list)", "the elements in reverse order", 1, 1, [](const Args& a) {
                      const Value::List& l = to_list(a[0], "reverse()");
                      return Value(Value::List(l.rbegin(), l.rend()));
                    }};
    m["stride"] = {"stride(list, start, step)", "every step-th element from start (torch pads [b0, e0, b1, e1] -> begins)", 3, 3,
                   [](const Args& a) {
                     const Value::List& l = to_list(a[0], "stride()");
                     int64_t b = to_int(a[1]), k = to_int(a[2]);
                     if (b < 0 || k <= 0) throw EvalError("stride(): start must be >= 0 and step > 0");
                     Value::List out;
                     for (int64_t i = b; i < static_cast<int64_t>(l.size()); i += k) out.push_back(l[size_t(i)]);
                     return Value(std::move(out));
                   }};
    m["swap"] = {"swap(list, i, j)", "the list with elements i and j exchanged (negative counts from the end)", 3, 3,
                 [](const Args& a) {
                   Value::List l = to_list(a[0], "swap()");
                   int64_t n = static_cast<int64_t>(l.size()), i = to_int(a[1]), j = to_int(a[2]);
                   if (i < 0) i += n;
                   if (j < 0) j += n;
                   if (i < 0 || j < 0 || i >= n || j >= n) throw EvalError("swap(): index out of range");
                   std::swap(l[size_t(i)], l[size_t(j)]);
                   return Value(std::move(l));
                 }};
    m["range"] = {"range(n) | range(a, b)", "the integers 0..n-1 or a..b-1", 1, 2, [](const Args& a) {
                    int64_t b = a.size() == 2 ? to_int(a[0]) : 0, e = to_int(a.back());
                    // The length in unsigned arithmetic: e - b overflows int64 for range(-2^63, 2^63 - 1).
                    uint64_t len = e > b ? uint64_t(e) - uint64_t(b) : 0;
                    charge_steps(len, "range()");
                    Value::List out;
                    out.reserve(size_t(len));
                    for (int64_t i = b; i < e; ++i) out.emplace_back(i);
                    return Value(std::move(out));
                  }};
    // Shapes as lists: whether a value info's shape is fully known, the row-major strides of one,
    // and the flat offsets of every index of one (constant index tensors for lowerings).
    m["all_known"] = {"all_known(shape)", "the list is present and every element is an integer >= 0 (a shape without symbolic or unknown dimensions)", 1, 1,
                      [](const Args& a) {
                        if (!a[0].is_list()) return Value(false);
                        for (const Value& x : a[0].as_list())
                          if (!x.is_int() || x.as_int() < 0) return Value(false);
                        return Value(true);
                      }};
    m["strides"] = {"strides(shape)", "the row-major strides of a shape: [2, 3, 4] -> [12, 4, 1]", 1, 1, [](const Args& a) {
                      const Value::List& s = to_list(a[0], "strides()");
                      Value::List out(s.size(), Value(int64_t(1)));
                      int64_t acc = 1;
                      for (size_t i = s.size(); i-- > 0;) {
                        out[i] = Value(acc);
                        int64_t d = to_int(s[i]);
                        if (d < 0) throw EvalError("strides(): a negative dimension");
                        if (d && acc > std::numeric_limits<int64_t>::max() / d) throw EvalError("strides(): the shape's size overflows int64");
                        acc *= d;
                      }
                      return Value(std::move(out));
                    }};
    m["without"] = {"without(list, items)", "the elements of list not in items, in order: without(range(4), [1, 3]) -> [0, 2]", 2, 2,
                    [](const Args& a) {
                      const Value::List& s = to_list(a[0], "without()");
                      const Value::List& drop = to_list(a[1], "without()");
                      Value::List out;
                      for (const Value& v : s)
                        if (std::none_of(drop.begin(), drop.end(), [&](const Value& d) { return same(v, d); })) out.push_back(v);
                      return Value(std::move(out));
                    }};
    m["pick"] = {"pick(list, indices)", "the elements at indices (negative counting from the end), in that order: pick(shape(x), [0, 2])", 2, 2,
                 [](const Args& a) {
                   const Value::List& s = to_list(a[0], "pick()");
                   Value::List out;
                   int64_t n = static_cast<int64_t>(s.size());
                   for (const Value& v : to_list(a[1], "pick()")) {
                     int64_t i = to_int(v);
                     if (i < -n || i >= n) throw EvalError(fmt::format("pick(): index {} out of range for {} elements", i, n));
                     out.push_back(s[static_cast<size_t>(i < 0 ? i + n : i)]);
                   }
                   return Value(std::move(out));
                 }};
    m["prod"] = {"prod(list[, indices])", "the product of the integers of list (those at indices only, negative counting from the end, when given); 1 for none: prod(shape(x), [2, 3])", 1, 2,
                 [](const Args& a) {
                   const Value::List& s = to_list(a[0], "prod()");
                   std::vector<size_t> pick;
                   if (a.size() > 1) {
                     for (const Value& v : to_list(a[1], "prod()")) {
                       int64_t i = to_int(v);
                       int64_t n = static_cast<int64_t>(s.size());
                       if (i < -n || i >= n) throw EvalError(fmt::format("prod(): index {} out of range for {} elements", i, n));
                       pick.push_back(static_cast<size_t>(i < 0 ? i + n : i));
                     }
                   } else {
                     for (size_t i = 0; i < s.size(); ++i) pick.push_back(i);
                   }
                   int64_t acc = 1;
                   for (size_t i : pick) {
                     int64_t d = to_int(s[i]);
                     if (__builtin_mul_overflow(acc, d, &acc)) throw EvalError("prod(): the product overflows int64");
                   }
                   return Value(acc);
                 }};
    m["index_grid"] = {"index_grid(shape, weights)", "for every index (i0, i1, ...) of shape in row-major order, i0*w0 + i1*w1 + ...: index_grid([2, 3], [-1, 1]) -> [0, 1, 2, -1, 0, 1]", 2, 2,
                       [](const Args& a) {
                         const Value::List& s = to_list(a[0], "index_grid()");
                         const Value::List& w = to_list(a[1], "index_grid()");
                         if (s.size() != w.size()) throw EvalError("index_grid(): shape and weights differ in length");
                         std::vector<int64_t> dims, ws;
                         uint64_t n = 1;
                         for (size_t i = 0; i < s.size(); ++i) {
                           int64_t d = to_int(s[i]);
                           if (d < 0) throw EvalError("index_grid(): a negative dimension");
                           dims.push_back(d);
                           ws.push_back(to_int(w[i]));
                           n = d && n > std::numeric_limits<uint64_t>::max() / uint64_t(d) ? std::numeric_limits<uint64_t>::max() : n * uint64_t(d);
                         }
                         charge_steps(n, "index_grid()");
                         Value::List out;
                         out.reserve(size_t(n));
                         std::vector<int64_t> idx(dims.size(), 0);
                         for (uint64_t k = 0; k < n; ++k) {
                           int64_t v = 0;
                           for (size_t i = 0; i < idx.size(); ++i) v += idx[i] * ws[i];
                           out.emplace_back(v);
                           for (size_t i = idx.size(); i-- > 0;) {
                             if (++idx[i] < dims[i]) break;
                             idx[i] = 0;
                           }
                         }
                         return Value(std::move(out));
                       }};
    m["coords"] = {"coords(shape)", "the index (i0, i1, ...) of every element of shape in row-major order, one after another: coords([2, 2]) -> [0, 0, 0, 1, 1, 0, 1, 1]", 1, 1,
                   [](const Args& a) {
                     std::vector<int64_t> dims;
                     uint64_t n = 1;
                     for (const Value& x : to_list(a[0], "coords()")) {
                       int64_t d = to_int(x);
                       if (d < 0) throw EvalError("coords(): a negative dimension");
                       dims.push_back(d);
                       n = d && n > std::numeric_limits<uint64_t>::max() / uint64_t(d) ? std::numeric_limits<uint64_t>::max() : n * uint64_t(d);
                     }
                     uint64_t total = dims.empty() || n > std::numeric_limits<uint64_t>::max() / dims.size() ? (dims.empty() ? 0 : n) : n * dims.size();
                     charge_steps(total, "coords()");
                     Value::List out;
                     out.reserve(size_t(total));
                     std::vector<int64_t> idx(dims.size(), 0);
                     for (uint64_t k = 0; k < n && !dims.empty(); ++k) {
                       for (int64_t i : idx) out.emplace_back(i);
                       for (size_t i = idx.size(); i-- > 0;) {
                         if (++idx[i] < dims[i]) break;
                         idx[i] = 0;
                       }
                     }
                     return Value(std::move(out));
                   }};
    m["reshape"] = {"reshape(t, shape)", "the tensor t with the same elements in another shape (a constant of any rank: reshape(tensor(l, 'float64'), [2, 3]))", 2, 2,
                    [](const Args& a) {
                      const ir::Tensor& t = to_tensor(a[0], "reshape()");
                      std::vector<int64_t> shape;
                      uint64_t n = 1;
                      for (const Value& d : to_list(a[1], "reshape()")) {
                        int64_t x = to_int(d);
                        if (x < 0) throw EvalError("reshape(): a negative dimension");
                        shape.push_back(x);
                        n = x && n > std::numeric_limits<uint64_t>::max() / uint64_t(x) ? std::numeric_limits<uint64_t>::max() : n * uint64_t(x);
                      }
                      auto count = t.element_count();
                      if (!count || uint64_t(*count) != n)
                        throw EvalError(fmt::format("reshape(): {} elements do not fill shape {}", count ? std::to_string(*count) : "?", value_str(a[1])));
                      return Value(ir::Tensor::from_bytes(t.dtype, std::move(shape), std::string(t.bytes())));
                    }};
    m["begin_end"] = {"begin_end(pairs)", "[[b0, e0], [b1, e1], ...] -> [b0, b1, ..., e0, e1, ...] (TF paddings -> ONNX pads)", 1, 1,
                      [](const Args& a) {
                        Value::List b, e;
                        for (const Value& p : to_list(a[0], "begin_end()")) {
                          const auto& l = to_list(p, "begin_end()");
                          if (l.size() != 2) throw EvalError("begin_end(): each entry must be a pair");
                          b.push_back(l[0]);
                          e.push_back(l[1]);
                        }
                        b.insert(b.end(), e.begin(), e.end());
                        return Value(std::move(b));
                      },
                      [](const Value& r, const Args&) -> std::optional<Value> {
                        const auto& l = to_list(r, "begin_end()");
                        if (l.size() % 2) return std::nullopt;
                        Value::List out;
                        for (size_t i = 0; i < l.size() / 2; ++i) out.emplace_back(Value::List{l[i], l[i + l.size() / 2]});
                        return Value(std::move(out));
                      }};
    m["min"] = {"min(a, b)", "the smaller", 2, 2, [](const Args& a) { return num(a[1]) < num(a[0]) ? a[1] : a[0]; }};
    m["max"] = {"max(a, b)", "the larger", 2, 2, [](const Args& a) { return num(a[1]) > num(a[0]) ? a[1] : a[0]; }};
    m["bits"] = {"bits(x, n)", "the n low bits of the integer x, least significant first: bits(6, 4) -> [0, 1, 1, 0] (bit masks)", 2, 2,
                  [](const Args& a) {
                    int64_t x = to_int(a[0]), n = to_int(a[1]);
                    if (n < 0 || n > 64) throw EvalError("bits(): n must be 0..64");
                    Value::List l;
                    for (int64_t i = 0; i < n; ++i) l.emplace_back(int64_t((static_cast<uint64_t>(x) >> i) & 1u));
                    return Value(std::move(l));
                  }};
    m["abs"] = {"abs(x)", "absolute value", 1, 1, [](const Args& a) {
                  if (a[0].is_int() && a[0].as_int() == std::numeric_limits<int64_t>::min())
                    throw EvalError("abs(): the absolute value of -2^63 is not a 64-bit integer");
                  return a[0].is_int() ? Value(a[0].as_int() < 0 ? -a[0].as_int() : a[0].as_int()) : Value(std::fabs(num(a[0])));
                }};
    m["str"] = {"str(x)", "x as text", 1, 1, [](const Args& a) { return a[0].is_string() ? a[0] : Value(value_str(a[0])); }};
    m["int"] = {"int(x)", "x as an integer", 1, 1, [](const Args& a) {
                  if (a[0].is_int()) return a[0];
                  double t = std::trunc(num(a[0]));  // toward zero, as Python's int(); NaN stays NaN
                  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0))
                    throw EvalError("int(): " + value_str(a[0]) + " is outside the 64-bit integer range");
                  return Value(int64_t(t));
                }};
    m["float"] = {"float(x)", "x as a float", 1, 1, [](const Args& a) { return Value(num(a[0])); }};
    m["tensor"] = {"tensor(x, dtype)", "a list -> 1-D tensor, a scalar -> 0-D tensor of that element type ('int64', 'float32', ...)", 2, 2,
                   [](const Args& a) { return a[0].is_null() ? Value() : make_tensor(a[0], dtype_arg(a[1])); },
                   [](const Value& r, const Args& a) -> std::optional<Value> {
                     const ir::Tensor& t = to_tensor(r, "tensor()");
                     if (t.dtype != dtype_arg(a[1]) || t.shape.size() > 1) return std::nullopt;
                     Value::List l = tensor_elems(t);
                     if (t.shape.empty()) return l.size() == 1 ? std::optional<Value>(l[0]) : std::nullopt;
                     return Value(std::move(l));
                   }};
    m["list"] = {"list(t)", "the elements of a tensor (any shape, row-major) as a list", 1, 1,
                 [](const Args& a) {
                   if (a[0].is_null() || a[0].is_list()) return a[0];
                   return Value(tensor_elems(to_tensor(a[0], "list()")));
                 },
                 [](const Value& r, const Args&) -> std::optional<Value> {  // ints -> int64, else float32
                   if (r.is_null()) return r;
                   bool ints = std::all_of(to_list(r, "list()").begin(), r.as_list().end(), [](const Value& x) { return x.is_int(); });
                   return make_tensor(r, ints ? ir::DType::Int64 : ir::DType::Float32);
                 }};
    // numpy's broadcasting made explicit (the amanda/core table): `from` placed right-aligned in
    // `to`; the axes it lacks or has as 1 where `to` is not, and `to` without those axes (the
    // Reshape before a Broadcast). Both shapes must be known.
    auto bcast = [](const Args& a, const char* what) {
      const Value::List& f = to_list(a[0], what);
      const Value::List& t = to_list(a[1], what);
      if (f.size() > t.size()) throw EvalError(std::string(what) + ": the first shape has the larger rank");
      size_t off = t.size() - f.size();
      std::vector<bool> axis(t.size(), false);
      for (size_t i = 0; i < t.size(); ++i) {
        if (i < off) {
          axis[i] = true;
          continue;
        }
        int64_t fd = to_int(f[i - off]), td = to_int(t[i]);
        if (fd == td) continue;
        if (fd != 1) throw EvalError(fmt::format("{}: dimension {} of the first shape is {}, which cannot broadcast to {}", what, i - off, fd, td));
        axis[i] = true;
      }
      return axis;
    };
    m["broadcast_axes"] = {"broadcast_axes(from, to)", "the axes of shape `to` that shape `from` (right-aligned) lacks or has as 1: broadcast_axes([3, 1], [2, 3, 4]) -> [0, 2]", 2, 2,
                           [bcast](const Args& a) {
                             std::vector<bool> ax = bcast(a, "broadcast_axes()");
                             Value::List out;
                             for (size_t i = 0; i < ax.size(); ++i)
                               if (ax[i]) out.emplace_back(static_cast<int64_t>(i));
                             return Value(std::move(out));
                           }};
    m["broadcast_kept"] = {"broadcast_kept(from, to)", "shape `to` without broadcast_axes(from, to): broadcast_kept([3, 1], [2, 3, 4]) -> [3]", 2, 2,
                           [bcast](const Args& a) {
                             std::vector<bool> ax = bcast(a, "broadcast_kept()");
                             Value::List out;
                             const Value::List& t = a[1].as_list();
                             for (size_t i = 0; i < ax.size(); ++i)
                               if (!ax[i]) out.push_back(t[i]);
                             return Value(std::move(out));
                           }};
    m["sort"] = {"sort(list)", "the integers in increasing order", 1, 1, [](const Args& a) {
                   std::vector<int64_t> v;
                   for (const Value& x : to_list(a[0], "sort()")) v.push_back(to_int(x));
                   std::sort(v.begin(), v.end());
                   Value::List out;
                   for (int64_t x : v) out.emplace_back(x);
                   return Value(std::move(out));
                 }};
    m["normalize_axes"] = {"normalize_axes(axes, rank)", "negative axes (an int or a list) counted from the end made non-negative; rank may be null when none is negative", 2, 2,
                           [](const Args& a) {
                             auto one = [&](const Value& x) {
                               int64_t v = to_int(x);
                               if (v >= 0) return Value(v);
                               if (a[1].is_null()) throw EvalError("a negative axis needs the rank, which is unknown here");
                               return Value(v + to_int(a[1]));
                             };
                             if (a[0].is_null()) return a[0];
                             if (!a[0].is_list()) return one(a[0]);
                             Value::List out;
                             for (const Value& x : a[0].as_list()) out.push_back(one(x));
                             return Value(std::move(out));
                           }};
    m["scalar"] = {"scalar(t)", "the one element of a tensor (0-D or one element)", 1, 1, [](const Args& a) {
                     if (a[0].is_null() || !a[0].is_tensor()) return a[0];
                     Value::List l = tensor_elems(a[0].as_tensor());
                     if (l.size() != 1) throw EvalError(fmt::format("scalar(): the tensor has {} elements", l.size()));
                     return l[0];
                   }};
    m["dtype_of"] = {"dtype_of(t)", "the element type name of a tensor value", 1, 1,
                     [](const Args& a) { return Value(std::string(ir::dtype_name(to_tensor(a[0], "dtype_of()").dtype))); }};
    m["shape_of"] = {"shape_of(t)", "the shape of a tensor value", 1, 1, [](const Args& a) {
                       Value::List l;
                       for (int64_t d : to_tensor(a[0], "shape_of()").shape) l.emplace_back(d);
                       return Value(std::move(l));
                     }};
    m["dtype_code"] = {"dtype_code(name, system)", "an element type name -> its number in a framework's numbering (a system its frontend registered)",
                       2, 2,
                       [](const Args& a) {
                         const std::string& n = to_string(a[0], "dtype_code()");
                         auto canon = ir::dtype_from_name(n);
                         for (auto& [code, name] : dtype_table(a[1]))
                           if (name == n || (canon && name == ir::dtype_name(*canon))) return Value(int64_t(code));
                         throw EvalError("dtype_code(): " + n + " has no number in " + value_str(a[1]));
                       },
                       [](const Value& r, const Args& a) -> std::optional<Value> {
                         for (auto& [code, name] : dtype_table(a[1]))
                           if (r.is_int() && r.as_int() == code) return Value(std::string(name));
                         return std::nullopt;
                       }};
    m["dtype_name"] = {"dtype_name(code, system)", "the inverse of dtype_code", 2, 2,
                       [](const Args& a) {
                         for (auto& [code, name] : dtype_table(a[1]))
                           if (code == to_int(a[0])) return Value(std::string(name));
                         throw EvalError("dtype_name(): no element type " + value_str(a[0]) + " in " + value_str(a[1]));
                       },
                       [](const Value& r, const Args& a) -> std::optional<Value> {
                         for (auto& [code, name] : dtype_table(a[1]))
                           if (r.is_string() && r.as_string() == name) return Value(int64_t(code));
                         return std::nullopt;
                       }};
    // Port predicates: evaluated with the Expr (they read the graph), see Expr::eval.
    m["rank"] = {"rank(port)", "the rank of the value at a captured port, or null when unknown", 1, 1, nullptr, nullptr, true};
    m["shape"] = {"shape(port)", "the shape of the value at a captured port (ints, strings for symbolic dims), or null", 1, 1,
                  nullptr, nullptr, true};
    m["dtype"] = {"dtype(port)", "the element type at a captured port ('float32', ...), or null when unknown", 1, 1, nullptr,
                  nullptr, true};
    m["is_const"] = {"is_const(port)", "the input at a captured port comes from a constant", 1, 1, nullptr, nullptr, true};
    m["used"] = {"used(port)", "the captured output port has consumers (an optional output the op lacks, or one nothing reads, is not used)", 1, 1,
                 nullptr, nullptr, true};
    m["connected"] = {"connected(port)", "the captured input port is fed by an edge (an absent optional input is not)", 1, 1, nullptr,
                      nullptr, true};
    return m;
  }();
  return fns;
}

Value port_fn(const Expr& e, const Bindings& b) {
  // An optional port the op does not have at all is captured as null: not connected.
  if ((e.name == "connected" || e.name == "used") && e.args[0]->kind == Expr::Kind::Ref && !b.port(e.args[0]->name))
    if (const Value* v = b.get(e.args[0]->name); v && v->is_null()) return Value(false);
  ir::PortId p = port_arg(*e.args[0], b, e.name.c_str());
  const ir::Graph& g = *b.graph;
  if (e.name == "connected") return Value(g.port_dir(p) == ir::PortDir::Out || bool(g.producer(p)));
  if (e.name == "used") return Value(g.port_dir(p) == ir::PortDir::Out ? g.out_degree(p) > 0 : bool(g.producer(p)));
  if (e.name == "is_const") {
    ir::PortId src = g.port_dir(p) == ir::PortDir::In ? g.producer(p) : p;
    if (!src) return Value(false);
    ir::OpId op = g.port_op(src);
    if (op == g.root() || g.is_graph(op)) return Value(ir::fixed_initializer(g, src) != nullptr);
    return Value(ir::is_constant_output(g, src));
  }
  ir::PortId vp = value_port(g, p);
  const ir::TypeData* tt = vp ? tensor_type(g, vp) : nullptr;
  if (e.name == "dtype") {
    if (tt) return Value(std::string(ir::dtype_name(tt->elem)));
    const Value* t = vp ? port_info(g, vp, "type") : nullptr;
    if (!t || !t->is_string()) {
      // No type at all: an untyped constant's tensor gives its element type.
      ir::PortId src = g.port_dir(p) == ir::PortDir::In ? g.producer(p) : p;
      if (!src || g.port_type(src)) return Value();
      const Value* c = ir::constant_tensor(g, src);
      return c ? Value(std::string(ir::dtype_name(c->as_tensor().dtype))) : Value();
    }
    std::string s = t->as_string();
    if (s.starts_with("tensor(") && s.ends_with(")")) s = s.substr(7, s.size() - 8);
    if (auto d = ir::dtype_from_name(s)) return Value(std::string(ir::dtype_name(*d)));
    return Value(s);
  }
  if (tt) {
    // Unknown dimensions are "?" and symbolic ones their names.
    if (!tt->ranked) return Value();
    if (e.name == "rank") return Value(int64_t(tt->dims.size()));
    Value::List l;
    for (const ir::Dim& d : tt->dims)
      l.push_back(d.is_known() ? Value(d.value()) : d.is_symbol() ? Value(std::string(g.str(d.sym()))) : Value(std::string("?")));
    return Value(std::move(l));
  }
  const Value* s = vp ? port_info(g, vp, "shape") : nullptr;
  if (!s || !s->is_list()) {
    // No shape at all: an untyped constant's tensor gives its shape.
    ir::PortId src = g.port_dir(p) == ir::PortDir::In ? g.producer(p) : p;
    if (!src || g.port_type(src)) return Value();
    const Value* c = ir::constant_tensor(g, src);
    if (!c) return Value();
    const std::vector<int64_t>& dims = c->as_tensor().shape;
    if (e.name == "rank") return Value(int64_t(dims.size()));
    Value::List l;
    for (int64_t d : dims) l.push_back(Value(d));
    return Value(std::move(l));
  }
  if (e.name == "rank") return Value(int64_t(s->as_list().size()));
  return *s;
}

}  // namespace

std::string value_str(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null: return "null";
    case Value::Kind::Bool: return v.as_bool() ? "true" : "false";
    case Value::Kind::Int: return std::to_string(v.as_int());
    case Value::Kind::Float: return fmt::format("{}", v.as_float());
    case Value::Kind::String: return "'" + v.as_string() + "'";
    case Value::Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < v.as_list().size(); ++i) s += (i ? ", " : "") + value_str(v.as_list()[i]);
      return s + "]";
    }
    case Value::Kind::Tensor: {
      const ir::Tensor& t = v.as_tensor();
      std::string s = fmt::format("tensor({}, [", ir::dtype_name(t.dtype));
      for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
      s += "]";
      if (t.element_count().value_or(100) <= 8 && t.dtype != ir::DType::String) {
        try {
          s += ": " + value_str(Value(tensor_elems(t)));
        } catch (const EvalError&) {
        }
      }
      return s + ")";
    }
    case Value::Kind::Map: return "{...}";
    case Value::Kind::Graph: return "graph";
  }
  return "?";
}

std::vector<FunctionInfo> functions() {
  std::vector<FunctionInfo> out;
  for (const auto& [name, f] : registry()) out.push_back({name, f.signature, f.doc, bool(f.inverse)});
  return out;
}
bool is_function(std::string_view name) { return registry().contains(name); }

// ---------------------------------------------------------------- evaluation

// The value of a literal or of a bound ref, read in place (an operand is read, not kept: copying a
// bound list to index it, or every operand of a comparison, was a tenth of the engine's
// allocations); anything else is evaluated into `scratch`. Charges the step eval() would.
static const Value& eval_operand(const Expr& e, const Bindings& b, Value& scratch) {
  if (e.kind == Expr::Kind::Literal) {
    charge_steps(1, "nodes evaluated");
    return e.literal;
  }
  if (e.kind == Expr::Kind::Ref) {
    const Value* v = b.get(e.name);
    if (v && !(v->is_null() && e.ref_default)) {
      charge_steps(1, "nodes evaluated");
      return *v;
    }
  }
  scratch = e.eval(b);
  return scratch;
}

Value Expr::eval(const Bindings& b) const {
  EvalScope scope;
  charge_steps(1, "nodes evaluated");
  switch (kind) {
    case Kind::Literal: return literal;
    case Kind::Ref: {
      if (const Value* v = b.get(name)) {
        if (v->is_null() && ref_default) return *ref_default;
        return *v;
      }
      if (ref_default) return *ref_default;
      if (b.port(name)) throw EvalError("'" + name + "' is a port; use rank(), shape(), dtype(), is_const() or connected() on it");
      throw EvalError("'" + name + "' was not captured");
    }
    case Kind::List: {
      Value::List l;
      for (const auto& a : args) l.push_back(a->eval(b));
      return Value(std::move(l));
    }
    case Kind::Index: {
      Value base_s, idx_s;
      const Value& base = eval_operand(*args[0], b, base_s);
      const Value& idx = eval_operand(*args[1], b, idx_s);
      if (base.is_string()) {
        int64_t i = to_int(idx), n = int64_t(base.as_string().size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw EvalError("index out of range");
        return Value(std::string(1, base.as_string()[size_t(i)]));
      }
      const auto& l = to_list(base, "[]");
      int64_t i = to_int(idx), n = int64_t(l.size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) throw EvalError(fmt::format("index {} is out of range for {} elements", to_int(idx), n));
      return l[size_t(i)];
    }
    case Kind::Interp: {
      std::string s = parts[0];
      for (size_t i = 0; i < args.size(); ++i) {
        Value v = args[i]->eval(b);
        s += v.is_string() ? v.as_string() : value_str(v);
        s += parts[i + 1];
      }
      return Value(std::move(s));
    }
    case Kind::Unary: {
      Value vs;
      const Value& v = eval_operand(*args[0], b, vs);
      if (op == 'n') return Value(!truthy(v));
      if (v.is_list()) return elementwise(Value(int64_t(0)), v, '-');
      return v.is_int() ? Value(int_op(0, v.as_int(), '-')) : Value(-num(v));
    }
    case Kind::Binary: {
      if (op == '&') return truthy(args[0]->eval(b)) ? Value(truthy(args[1]->eval(b))) : Value(false);
      if (op == '|') return truthy(args[0]->eval(b)) ? Value(true) : Value(truthy(args[1]->eval(b)));
      Value xs, ys;
      const Value& x = eval_operand(*args[0], b, xs);
      const Value& y = eval_operand(*args[1], b, ys);
      switch (op) {
        case '=': return Value(same(x, y));
        case '!': return Value(!same(x, y));
        case 'i': {
          if (y.is_null()) return Value(false);
          if (y.is_string()) return Value(y.as_string().find(to_string(x, "in")) != std::string::npos);
          for (const Value& e : to_list(y, "in"))
            if (same(x, e)) return Value(true);
          return Value(false);
        }
        case '<':
        case 'l':
        case '>':
        case 'g': {
          if (x.is_null() || y.is_null()) return Value(false);
          double p = num(x), q = num(y);
          return Value(op == '<' ? p < q : op == 'l' ? p <= q : op == '>' ? p > q : p >= q);
        }
        default: break;
      }
      if (x.is_null() || y.is_null()) throw EvalError("'" + name + "' of a missing value");
      return arith(x, y, op);
    }
    case Kind::Call: {
      const Fn& f = fn ? *fn : registry().find(name)->second;
      if (f.takes_ports) return port_fn(*this, b);
      if (op == '?') return truthy(args[0]->eval(b)) ? args[1]->eval(b) : args[2]->eval(b);  // if(): lazy
      Args a;
      a.reserve(args.size());
      for (const auto& x : args) a.push_back(x->eval(b));
      return f.eval(a);
    }
  }
  return Value();
}

void Expr::refs(std::vector<std::string>& out) const {
  if (kind == Kind::Ref && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  for (const auto& a : args) a->refs(out);
}

bool Expr::invertible() const {
  switch (kind) {
    case Kind::Ref: return true;
    case Kind::Literal: return true;
    case Kind::Call: {
      auto it = registry().find(name);
      return it != registry().end() && it->second.inverse && !args.empty() && args[0]->invertible();
    }
    case Kind::Binary: return (name == "+" || name == "-" || name == "*") && (args[0]->invertible() || args[1]->invertible());
    case Kind::Unary: return name == "-" && args[0]->invertible();
    case Kind::List: return std::all_of(args.begin(), args.end(), [](const auto& a) { return a->invertible(); });
    default: return false;
  }
}

bool Expr::bind(const Value& v, Bindings& b) const {
  std::vector<std::string> free;
  refs(free);
  std::erase_if(free, [&](const std::string& r) { return b.has(r); });
  if (free.empty()) return same(eval(b), v);  // everything is known: compare
  switch (kind) {
    case Kind::Ref:
      b.set(name, v);
      return true;
    case Kind::List: {
      if (!v.is_list() || v.as_list().size() != args.size()) return false;
      for (size_t i = 0; i < args.size(); ++i)
        if (!args[i]->bind(v.as_list()[i], b)) return false;
      return true;
    }
    case Kind::Unary:
      if (name == "-" && !v.is_null()) return args[0]->bind(v.is_list() ? elementwise(Value(int64_t(0)), v, '-') : arith(Value(int64_t(0)), v, '-'), b);
      break;
    case Kind::Binary: {
      if (v.is_null() || (name != "+" && name != "-" && name != "*")) break;
      std::vector<std::string> left;
      args[0]->refs(left);
      bool left_free = std::any_of(left.begin(), left.end(), [&](const std::string& r) { return !b.has(r); });
      const Expr& unknown = left_free ? *args[0] : *args[1];
      Value known = (left_free ? args[1] : args[0])->eval(b);
      Value x;
      if (name == "+") x = arith(v, known, '-');
      else if (name == "-") x = left_free ? arith(v, known, '+') : arith(known, v, '-');
      else {
        x = arith(v, known, '/');
        if (!same(arith(x, known, '*'), v)) return false;
      }
      return unknown.bind(x, b);
    }
    case Kind::Call: {
      auto it = registry().find(name);
      if (it == registry().end() || !it->second.inverse) break;
      Args rest(args.size());
      for (size_t i = 1; i < args.size(); ++i) rest[i] = args[i]->eval(b);  // the others must be known
      std::optional<Value> x = it->second.inverse(v, rest);
      if (!x) return false;
      return args[0]->bind(*x, b);
    }
    default: break;
  }
  throw EvalError("'" + str() + "' cannot be matched against a value (no inverse); capture with {ref: x} and test it in `when`");
}

std::string Expr::str() const {
  switch (kind) {
    case Kind::Literal: return value_str(literal);
    case Kind::Ref: return name;
    case Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i]->str();
      return s + "]";
    }
    case Kind::Index: return args[0]->str() + "[" + args[1]->str() + "]";
    case Kind::Interp: {
      std::string s = parts[0];
      for (size_t i = 0; i < args.size(); ++i) s += "{" + args[i]->str() + "}" + parts[i + 1];
      return s;
    }
    case Kind::Unary: return name == "not" ? "not " + args[0]->str() : "-" + args[0]->str();
    case Kind::Binary: return "(" + args[0]->str() + " " + name + " " + args[1]->str() + ")";
    case Kind::Call: {
      std::string s = name + "(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i]->str();
      return s + ")";
    }
  }
  return "?";
}

// ---------------------------------------------------------------- parsing

namespace {

class Parser {
 public:
  Parser(std::string_view s, const SourceLoc& loc) : s_(s), loc_(loc) {}

  std::unique_ptr<Expr> parse() {
    auto e = parse_or();
    skip();
    if (i_ != s_.size()) fail("unexpected '" + std::string(s_.substr(i_, 1)) + "'");
    return e;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  SourceLoc loc_;
  uint64_t depth_ = 0;
  const uint64_t max_depth_ = Budget::run().limits().depth;

  // One level of recursion (a parenthesis, `not`, unary `-`, a bracket, a call's arguments).
  struct Deeper {
    Parser& p;
    explicit Deeper(Parser& p) : p(p) {
      if (++p.depth_ > p.max_depth_) {
        --p.depth_;
        p.fail("nested deeper than " + std::to_string(p.max_depth_) + " levels (--max-depth)");
      }
    }
    ~Deeper() { --p.depth_; }
  };
  // Sets e's height from its children's; a chain made by a loop (1 + 1 + ... + 1) is as deep as
  // nested brackets for whoever walks the tree.
  std::unique_ptr<Expr> sized(std::unique_ptr<Expr> e) {
    uint32_t h = 0;
    for (const auto& a : e->args) h = std::max(h, a->height);
    if (uint64_t(h) + 1 > max_depth_) fail("nested deeper than " + std::to_string(max_depth_) + " levels (--max-depth)");
    e->height = h + 1;
    return e;
  }

  [[noreturn]] void fail(const std::string& msg) const {
    SourceLoc l = loc_;
    if (l.column) l.column += uint32_t(i_);
    throw ParseError(l, "in expression '" + std::string(s_) + "': " + msg);
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.substr(i_, tok.size()) != tok) return false;
    if (std::isalpha(static_cast<unsigned char>(tok[0]))) {  // a keyword must end there
      size_t e = i_ + tok.size();
      if (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) return false;
    }
    i_ += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!eat(tok)) fail("expected '" + std::string(tok) + "'");
  }
  static std::unique_ptr<Expr> node(Expr::Kind k, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->name = std::move(name);
    if (k == Expr::Kind::Unary || k == Expr::Kind::Binary) e->op = op_code(e->name);
    return e;
  }
  static char op_code(const std::string& n) {
    static const std::pair<const char*, char> codes[] = {{"+", '+'}, {"-", '-'}, {"*", '*'}, {"/", '/'}, {"%", '%'},
                                                         {"==", '='}, {"!=", '!'}, {"<", '<'}, {"<=", 'l'}, {">", '>'},
                                                         {">=", 'g'}, {"and", '&'}, {"or", '|'}, {"in", 'i'}, {"not", 'n'}};
    for (const auto& [s, c] : codes)
      if (n == s) return c;
    throw Error("table expression: unknown operator '" + n + "'");
  }
  std::unique_ptr<Expr> binary(std::string op, std::unique_ptr<Expr> a, std::unique_ptr<Expr> b) {
    auto e = node(Expr::Kind::Binary, std::move(op));
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return sized(std::move(e));
  }
  std::unique_ptr<Expr> parse_or() {
    Deeper d(*this);
    auto e = parse_and();
    while (eat("or")) e = binary("or", std::move(e), parse_and());
    return e;
  }
  std::unique_ptr<Expr> parse_and() {
    auto e = parse_not();
    while (eat("and")) e = binary("and", std::move(e), parse_not());
    return e;
  }
  std::unique_ptr<Expr> parse_not() {
    if (eat("not")) {
      Deeper d(*this);
      auto e = node(Expr::Kind::Unary, "not");
      e->args.push_back(parse_not());
      return sized(std::move(e));
    }
    return parse_cmp();
  }
  std::unique_ptr<Expr> parse_cmp() {
    auto e = parse_sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"})
      if (eat(op)) return binary(op, std::move(e), parse_sum());
    if (eat("in")) return binary("in", std::move(e), parse_sum());
    if (eat("not")) {
      expect("in");
      auto n = node(Expr::Kind::Unary, "not");
      n->args.push_back(binary("in", std::move(e), parse_sum()));
      return sized(std::move(n));
    }
    return e;
  }
  std::unique_ptr<Expr> parse_sum() {
    auto e = parse_prod();
    for (;;) {
      if (eat("+")) e = binary("+", std::move(e), parse_prod());
      else if (eat("-")) e = binary("-", std::move(e), parse_prod());
      else return e;
    }
  }
  std::unique_ptr<Expr> parse_prod() {
    auto e = parse_unary();
    for (;;) {
      if (eat("*")) e = binary("*", std::move(e), parse_unary());
      else if (eat("/")) e = binary("/", std::move(e), parse_unary());
      else if (eat("%")) e = binary("%", std::move(e), parse_unary());
      else return e;
    }
  }
  std::unique_ptr<Expr> parse_unary() {
    if (eat("-")) {
      Deeper d(*this);
      auto inner = parse_unary();
      if (inner->kind == Expr::Kind::Literal && inner->literal.is_int()) {
        if (inner->literal.as_int() == std::numeric_limits<int64_t>::min()) fail("-(-9223372036854775808) overflows int64");
        inner->literal = Value(-inner->literal.as_int());
        return inner;
      }
      if (inner->kind == Expr::Kind::Literal && inner->literal.is_float()) {
        inner->literal = Value(-inner->literal.as_float());
        return inner;
      }
      auto e = node(Expr::Kind::Unary, "-");
      e->args.push_back(std::move(inner));
      return sized(std::move(e));
    }
    auto e = parse_primary();
    while (eat("[")) {
      auto idx = node(Expr::Kind::Index);
      idx->args.push_back(std::move(e));
      idx->args.push_back(parse_or());
      expect("]");
      e = sized(std::move(idx));
    }
    return e;
  }
  std::unique_ptr<Expr> parse_primary() {
    Deeper d(*this);
    skip();
    if (i_ >= s_.size()) fail("unexpected end");
    char c = s_[i_];
    if (eat("(")) {
      auto e = parse_or();
      expect(")");
      return e;
    }
    if (eat("[")) {
      auto e = node(Expr::Kind::List);
      if (!eat("]")) {
        do e->args.push_back(parse_or());
        while (eat(","));
        expect("]");
      }
      // A list of literals is a literal.
      if (std::all_of(e->args.begin(), e->args.end(), [](const auto& a) { return a->kind == Expr::Kind::Literal; })) {
        Value::List l;
        for (auto& a : e->args) l.push_back(a->literal);
        auto lit = node(Expr::Kind::Literal);
        lit->literal = Value(std::move(l));
        return lit;
      }
      return sized(std::move(e));
    }
    if (c == '\'' || c == '"') {
      size_t j = i_ + 1;
      std::string text;
      while (j < s_.size() && s_[j] != c) text += s_[j++];
      if (j >= s_.size()) fail("unterminated string");
      i_ = j + 1;
      auto e = node(Expr::Kind::Literal);
      e->literal = Value(std::move(text));
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
      size_t j = i_;
      bool is_float = false;
      while (j < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[j])) || s_[j] == '.' || s_[j] == 'e' || s_[j] == 'E' ||
                               ((s_[j] == '-' || s_[j] == '+') && j > i_ && (s_[j - 1] == 'e' || s_[j - 1] == 'E')))) {
        if (s_[j] == '.' || s_[j] == 'e' || s_[j] == 'E') is_float = true;
        ++j;
      }
      std::string t(s_.substr(i_, j - i_));
      auto e = node(Expr::Kind::Literal);
      try {
        size_t used = 0;
        if (is_float) e->literal = Value(std::stod(t, &used));
        else e->literal = Value(int64_t(std::stoll(t, &used)));
        if (used != t.size()) fail("bad number '" + t + "'");
      } catch (const std::logic_error&) {
        fail("bad number '" + t + "'");
      }
      i_ = j;
      return e;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@') {
      size_t j = i_;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_' || s_[j] == '@')) ++j;
      std::string id(s_.substr(i_, j - i_));
      i_ = j;
      if (id == "true" || id == "false") {
        auto e = node(Expr::Kind::Literal);
        e->literal = Value(id == "true");
        return e;
      }
      if (id == "null") return node(Expr::Kind::Literal);
      if (id == "and" || id == "or" || id == "not" || id == "in") fail("unexpected '" + id + "'");
      if (eat("(")) {
        auto it = registry().find(id);
        if (it == registry().end()) fail("unknown function '" + id + "' (`amanda table functions` lists them)");
        auto e = node(Expr::Kind::Call, id);
        e->fn = &it->second;
        if (id == "if") e->op = '?';
        if (!eat(")")) {
          do e->args.push_back(parse_or());
          while (eat(","));
          expect(")");
        }
        int n = int(e->args.size());
        if (n < it->second.min_args || (it->second.max_args >= 0 && n > it->second.max_args))
          fail(fmt::format("{} takes {} arguments, not {}", it->second.signature,
                           it->second.max_args < 0 ? fmt::format("at least {}", it->second.min_args)
                           : it->second.min_args == it->second.max_args ? std::to_string(it->second.min_args)
                                                                        : fmt::format("{} to {}", it->second.min_args, it->second.max_args),
                           n));
        return sized(std::move(e));
      }
      return node(Expr::Kind::Ref, id);
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }
};

}  // namespace

std::unique_ptr<Expr> parse_expr(std::string_view text, const SourceLoc& loc) { return Parser(text, loc).parse(); }

bool is_template(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') {
      if (i + 1 < text.size() && text[i + 1] == '{') {
        ++i;
        continue;
      }
      return true;
    }
  }
  return false;
}

std::unique_ptr<Expr> parse_template(std::string_view text, const SourceLoc& loc) {
  auto lit = [](std::string s) {
    auto e = std::make_unique<Expr>();
    e->literal = Value(std::move(s));
    return e;
  };
  if (!is_template(text)) {
    std::string s;
    for (size_t i = 0; i < text.size(); ++i) {
      s += text[i];
      if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) ++i;
    }
    return lit(std::move(s));
  }
  auto interp = std::make_unique<Expr>();
  interp->kind = Expr::Kind::Interp;
  std::string piece;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      piece += c;
      ++i;
      continue;
    }
    if (c == '}') throw ParseError(loc, "in '" + std::string(text) + "': a '}' without its '{' (write '}}' for a brace)");
    if (c != '{') {
      piece += c;
      continue;
    }
    int depth = 1;
    size_t j = i + 1;
    char quote = 0;
    for (; j < text.size() && depth; ++j) {
      if (quote) {
        if (text[j] == quote) quote = 0;
      } else if (text[j] == '\'' || text[j] == '"') {
        quote = text[j];
      } else if (text[j] == '{') {
        ++depth;
      } else if (text[j] == '}') {
        --depth;
      }
    }
    if (depth) throw ParseError(loc, "in '" + std::string(text) + "': a '{' without its '}'");
    SourceLoc l = loc;
    if (l.column) l.column += uint32_t(i + 1);
    interp->parts.push_back(std::move(piece));
    piece.clear();
    interp->args.push_back(parse_expr(text.substr(i + 1, j - i - 2), l));
    i = j - 1;
  }
  interp->parts.push_back(std::move(piece));
  if (interp->args.size() == 1 && interp->parts[0].empty() && interp->parts[1].empty()) return std::move(interp->args[0]);
  return interp;
}

}  // namespace amanda::mapping
