// Ordered arguments <-> named attributes (nd4j.h), the op-number hash and the element types of
// sd.graph.DType.
#include <algorithm>
#include <array>

#include "amanda/ir/tensor.h"
#include "frameworks/nd4j/nd4j.h"

namespace amanda::nd4j {

namespace {

bool kind_ok(ArgList l, const ir::Value& v) {
  switch (l) {
    case ArgList::Int: return v.is_int();
    case ArgList::Float: return v.is_float() || v.is_int();
    case ArgList::Bool: return v.is_bool();
    case ArgList::DType: return v.is_string();
    case ArgList::String: return v.is_string();
  }
  return false;
}

// The problem with op's list l, or "" (fills `out` when given).
std::string collect(const ir::Graph& g, ir::OpId op, const OpDesc* desc, ArgList l, std::vector<ir::Value>* out) {
  std::vector<const ArgDesc*> args = desc ? desc->list(l) : std::vector<const ArgDesc*>{};
  const ir::Value* rest = nullptr;
  if (Symbol k = g.symbols().find(rest_attr(l)); k != SymbolTable::kNone) rest = g.attr(op, k);
  if (rest && !rest->is_list()) return "attribute '" + rest_attr(l) + "' must be a list";
  std::vector<const ir::Value*> vals(args.size(), nullptr);
  int last = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i]->index != i) return "the descriptor's " + std::string(list_name(l)) + " arguments have a gap at index " + std::to_string(i);
    Symbol k = g.symbols().find(args[i]->attr);
    if (k != SymbolTable::kNone) vals[i] = g.attr(op, k);
    if (vals[i]) {
      bool list_ok = vals[i]->is_list() && std::all_of(vals[i]->as_list().begin(), vals[i]->as_list().end(),
                                                        [&](const ir::Value& x) { return kind_ok(l, x); });
      if (!kind_ok(l, *vals[i]) && !list_ok)
        return std::string(list_name(l)) + " argument " + std::to_string(i) + " '" + args[i]->attr + "' is not of type " + args[i]->type;
      last = static_cast<int>(i);
    }
  }
  bool has_rest = rest && !rest->as_list().empty();
  // A list value (an array argument) fills its index and the ones after it: it must be the last.
  for (int i = 0; i < last; ++i)
    if (vals[i] && vals[i]->is_list())
      return std::string(list_name(l)) + " argument " + std::to_string(i) + " '" + args[i]->attr +
             "' holds a list (an array argument), so no later argument of the list may be given";
  if (has_rest && last >= 0 && vals[last]->is_list())
    return std::string(list_name(l)) + " argument " + std::to_string(last) + " '" + args[last]->attr + "' holds a list, and " +
           rest_attr(l) + " is given too";
  if (has_rest) last = static_cast<int>(args.size());
  for (int i = 0; i < last && i < static_cast<int>(args.size()); ++i)
    if (!vals[i])
      return "missing " + args[i]->type + " argument " + std::to_string(i) + " '" + args[i]->attr + "' of " +
             std::string(g.type_str(op)) + " (a later " + std::string(list_name(l)) + " argument is given: ordered arguments cannot skip one)";
  if (has_rest)
    for (const auto& v : rest->as_list())
      if (!kind_ok(l, v)) return "attribute '" + rest_attr(l) + "' holds a value that is not a " + std::string(list_name(l));
  if (out) {
    for (int i = 0; i <= last && i < static_cast<int>(args.size()); ++i) {
      if (vals[i]->is_list())
        for (const auto& x : vals[i]->as_list()) out->push_back(x);
      else
        out->push_back(*vals[i]);
    }
    if (has_rest)
      for (const auto& v : rest->as_list()) out->push_back(v);
  }
  return {};
}

}  // namespace

OrderedArgs ordered_args(const ir::Graph& g, ir::OpId op, const OpDesc* desc) {
  OrderedArgs r;
  for (int l = 0; l < kArgLists; ++l) {
    std::string why = collect(g, op, desc, ArgList(l), &r.lists[l]);
    if (!why.empty()) throw Error(g.path(op) + ": " + why);
  }
  return r;
}

void set_ordered_args(ir::Graph& g, ir::OpId op, const OpDesc* desc, const OrderedArgs& args) {
  for (int l = 0; l < kArgLists; ++l) {
    std::vector<const ArgDesc*> named = desc ? desc->list(ArgList(l)) : std::vector<const ArgDesc*>{};
    const auto& vals = args.lists[l];
    size_t i = 0;
    for (; i < vals.size() && i < named.size() && named[i]->index == i; ++i) g.set_attr(op, g.sym(named[i]->attr), vals[i]);
    if (i < vals.size()) g.set_attr(op, g.sym(rest_attr(ArgList(l))), ir::Value(ir::Value::List(vals.begin() + static_cast<long>(i), vals.end())));
  }
}

size_t check_ordered_args(const ir::Graph& g, Diagnostics& diags) {
  size_t n = 0;
  const Descriptors& d = Descriptors::shipped();
  g.for_each_op([&](ir::OpId op) {
    ir::OpId scope = g.parent(op);
    while (scope && !g.is_graph(scope)) scope = g.parent(scope);
    if (!scope || g.str(g.graph_namespace(scope)) != kNamespace) return;
    const OpDesc* desc = d.find(g.type_str(op));
    if (!desc) return;  // the validator reports unknown op types
    for (int l = 0; l < kArgLists; ++l) {
      std::string why = collect(g, op, desc, ArgList(l), nullptr);
      if (!why.empty()) {
        diags.error(g.path(op), why);
        ++n;
      }
    }
  });
  return n;
}

int64_t op_hash(std::string_view name) {
  static const std::array<uint64_t, 256> table = [] {
    std::array<uint64_t, 256> t{};
    uint64_t h = 0x544B2FBACAAF1684ULL;
    for (int i = 0; i < 256; ++i) {
      for (int j = 0; j < 31; ++j) {
        h = (h >> 7) ^ h;
        h = (h << 11) ^ h;
        h = (h >> 10) ^ h;
      }
      t[i] = h;
    }
    return t;
  }();
  uint64_t h = 0xBB40E64DA205B064ULL;
  const uint64_t m = 7664345821815920749ULL;
  for (char ch : name) {
    auto uch = static_cast<unsigned char>(ch);
    h = (h * m) ^ table[uch & 0xff];
    h = (h * m) ^ table[(uch >> 8) & 0xff];
  }
  return static_cast<int64_t>(h);
}

namespace {
struct DTypeName {
  int code;
  std::string_view name;
};
// sd.graph.DType codes; the ones Amanda has no element type for keep nd4j's own name.
constexpr DTypeName kDTypes[] = {
    {0, "nd4j.INHERIT"}, {1, "bool"},     {2, "nd4j.FLOAT8"}, {3, "float16"},  {4, "nd4j.HALF2"},   {5, "float32"},
    {6, "float64"},      {7, "int8"},     {8, "int16"},       {9, "int32"},    {10, "int64"},       {11, "uint8"},
    {12, "uint16"},      {13, "uint32"},  {14, "uint64"},     {15, "qint8"},   {16, "qint16"},      {17, "bfloat16"},
    {50, "string"},      {51, "nd4j.UTF16"}, {52, "nd4j.UTF32"},
};
}  // namespace

std::optional<std::string> dtype_from_sd(int code) {
  for (const auto& d : kDTypes)
    if (d.code == code) return std::string(d.name);
  return std::nullopt;
}

std::optional<int> dtype_to_sd(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.code;
  if (auto t = ir::dtype_from_name(name)) {
    std::string_view canon = ir::dtype_name(*t);
    for (const auto& d : kDTypes)
      if (d.name == canon) return d.code;
  }
  return std::nullopt;
}

}  // namespace amanda::nd4j
