// The archive: the pickled module objects and parameters, the constants, the code files.
#include "frameworks/torchscript/importer_state.h"

namespace amanda::torchscript {

namespace {

std::optional<DType> storage_dtype(std::string_view cls) {
  static const std::pair<const char*, DType> table[] = {
      {"torch.FloatStorage", DType::Float32}, {"torch.DoubleStorage", DType::Float64},
      {"torch.HalfStorage", DType::Float16},  {"torch.BFloat16Storage", DType::BFloat16},
      {"torch.LongStorage", DType::Int64},    {"torch.IntStorage", DType::Int32},
      {"torch.ShortStorage", DType::Int16},   {"torch.CharStorage", DType::Int8},
      {"torch.ByteStorage", DType::UInt8},    {"torch.BoolStorage", DType::Bool}};
  for (const auto& [n, t] : table)
    if (cls == n) return t;
  return std::nullopt;
}

// "Tensor(a!)" -> "Tensor", "Tensor(a)[]" -> "Tensor[]".

}  // namespace

void Importer::find_prefix() {
  for (const ZipEntry& e : zip_.entries()) {
    const std::string& n = e.name;
    if (n.size() >= 8 && n.compare(n.size() - 8, 8, "data.pkl") == 0) {
      std::string p = n.substr(0, n.size() - 8);
      if (p.empty() || (p.back() == '/' && p.find('/') == p.size() - 1)) {
        prefix_ = p;
        return;
      }
    }
  }
  if (zip_.find("model.json") || zip_.find("archive/model.json"))
    throw Unsupported(zip_.path() + ": an archive of the old (model.json) format");
  throw Error(zip_.path() + ": not a TorchScript archive (no data.pkl in the zip)");
}

std::shared_ptr<Storage> Importer::storage(const PyObject& pid, const std::string& folder) {
  // ('storage', torch.FloatStorage, key, location, numel)
  if (pid.kind != PyObject::Kind::Tuple || pid.items.size() < 5 || pid.items[0]->kind != PyObject::Kind::Str ||
      pid.items[0]->str != "storage" || pid.items[1]->kind != PyObject::Kind::Global ||
      pid.items[2]->kind != PyObject::Kind::Str || pid.items[4]->kind != PyObject::Kind::Int)
    throw Error(zip_.path() + ": byte " + std::to_string(pid.offset) + " of a pickle: a persistent id that is not a storage: " +
                torchscript::describe(pid));
  auto dt = storage_dtype(pid.items[1]->str);
  if (!dt) throw Unsupported(zip_.path() + ": storage class " + pid.items[1]->str);
  std::string key = folder + pid.items[2]->str;
  if (auto it = storages_.find(key); it != storages_.end()) return it->second;
  const ZipEntry* e = zip_.find(prefix_ + key);
  if (!e) throw Error(zip_.path() + ": no entry " + prefix_ + key + " for a tensor's storage");
  std::string_view bytes = zip_.data(*e);
  int64_t n = pid.items[4]->i;
  size_t es = ir::dtype_size(*dt);
  if (n < 0 || static_cast<uint64_t>(n) > bytes.size() / es)
    throw Error(zip_.path() + ": storage " + prefix_ + key + " holds " + std::to_string(bytes.size()) + " bytes, not " +
                std::to_string(n) + " elements");
  auto st = std::make_shared<Storage>();
  st->dtype = *dt;
  st->raw = reinterpret_cast<const uint8_t*>(bytes.data());
  st->count = static_cast<size_t>(n);
  if (zip_.borrowable(*e)) {
    st->owner = zip_.buffer();
  } else {
    Budget::run().charge(BudgetKind::Memory, bytes.size(), zip_.path() + ": storage " + prefix_ + key);
    st->owner = make_buffer(std::string(bytes));
    st->raw = st->owner->data();
  }
  storages_[key] = st;
  return st;
}

VRef Importer::rebuild_tensor(const PyObject& args, const std::string& folder, const std::string& path) {
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  auto fail = [&](const std::string& m) -> VRef {
    throw Error(zip_.path() + ": byte " + std::to_string(args.offset) + " of a pickle: _rebuild_tensor_v2: " + m);
  };
  if (args.kind != PyObject::Kind::Tuple || args.items.size() < 4) return fail("expects (storage, offset, size, stride, ...)");
  const PyObject& pid = *args.items[0];
  if (pid.kind != PyObject::Kind::PersistentId || pid.items.empty()) return fail("the storage is not a persistent id");
  std::shared_ptr<Storage> st = storage(*pid.items[0], folder);
  if (args.items[1]->kind != PyObject::Kind::Int) return fail("the offset is not an int");
  auto ints = [&](const PyObject& t) {
    std::vector<int64_t> v;
    if (t.kind != PyObject::Kind::Tuple && t.kind != PyObject::Kind::List) fail("size and stride must be tuples");
    for (const auto& x : t.items) {
      if (x->kind != PyObject::Kind::Int || x->i < 0) fail("size and stride hold non-negative ints");
      v.push_back(x->i);
    }
    return v;
  };
  std::vector<int64_t> size = ints(*args.items[2]), stride = ints(*args.items[3]);
  if (size.size() != stride.size()) return fail("size and stride differ in length");
  int64_t offset = args.items[1]->i;
  // The furthest element must lie inside the storage.
  int64_t last = offset;
  for (size_t k = 0; k < size.size(); ++k) {
    if (size[k] == 0) {
      last = -1;
      break;
    }
    if (size[k] > (int64_t(1) << 40) || stride[k] > (int64_t(1) << 40)) return fail("size or stride too large");
    last += (size[k] - 1) * stride[k];
  }
  if (offset < 0 || (last >= 0 && static_cast<uint64_t>(last) >= st->count)) return fail("the tensor lies outside its storage");
  auto v = std::make_shared<Val>();
  v->k = Val::K::Tensor;
  v->dtype = st->dtype;
  v->shape = size;
  v->known = std::make_shared<Known>();
  v->known->st = st;
  v->known->strides = stride;
  v->known->offset = offset;
  v->name = path;
  return v;
}

// The pickled object tree -> values. Module objects become Obj with their attributes.
VRef Importer::convert(const PyRef& p, const std::string& folder, const std::string& path, int depth) {
  if (depth > kMaxConvertDepth) throw Error(zip_.path() + ": pickled objects nested too deeply");
  if (auto it = converted_.find(p.get()); it != converted_.end()) return it->second;
  const PyObject& o = *p;
  VRef v;
  auto sub = [&](const PyRef& x, const std::string& name) {
    return convert(x, folder, path.empty() ? name : path + "." + name, depth + 1);
  };
  switch (o.kind) {
    case PyObject::Kind::None: v = make_none(); break;
    case PyObject::Kind::Bool: v = make_bool(o.b); break;
    case PyObject::Kind::Int: v = make_int(o.i); break;
    case PyObject::Kind::Float: v = make_float(o.f); break;
    case PyObject::Kind::Str: v = make_str(o.str); break;
    case PyObject::Kind::Bytes: v = make_str(o.str); break;
    case PyObject::Kind::Tuple:
    case PyObject::Kind::List: {
      std::vector<VRef> items;
      for (size_t k = 0; k < o.items.size(); ++k) items.push_back(sub(o.items[k], std::to_string(k)));
      v = make_list(std::move(items), o.kind == PyObject::Kind::Tuple ? Val::K::Tuple : Val::K::List);
      break;
    }
    case PyObject::Kind::Dict:
      v = make_none();  // dictionaries only appear as empty backward-hook dicts in what we read
      if (!o.dict.empty()) throw Unsupported(zip_.path() + ": a pickled dictionary as a value");
      break;
    case PyObject::Kind::Global:
    case PyObject::Kind::PersistentId:
      throw Error(zip_.path() + ": byte " + std::to_string(o.offset) + " of a pickle: a bare " +
                  torchscript::describe(o) + " where a value belongs");
    case PyObject::Kind::Call: {
      const PyObject& callee = *o.items.at(0);
      const PyObject& args = *o.items.at(1);
      if (callee.kind != PyObject::Kind::Global)
        throw Error(zip_.path() + ": byte " + std::to_string(o.offset) + ": a call of something that is not a global");
      const std::string& fn = callee.str;
      auto arg0 = [&]() -> const PyRef& {
        if (args.kind != PyObject::Kind::Tuple || args.items.empty())
          throw Error(zip_.path() + ": byte " + std::to_string(o.offset) + ": " + fn + " without arguments");
        return args.items[0];
      };
      if (fn == "torch._utils._rebuild_tensor_v2") {
        v = rebuild_tensor(args, folder, path);
      } else if (fn == "torch._utils._rebuild_parameter") {
        v = convert(arg0(), folder, path, depth + 1);
      } else if (fn == "collections.OrderedDict") {
        v = make_none();
      } else if (fn == "torch.jit._pickle.build_intlist" || fn == "torch.jit._pickle.build_doublelist" ||
                 fn == "torch.jit._pickle.build_boollist" || fn == "torch.jit._pickle.build_tensorlist" ||
                 fn == "torch.jit._pickle.restore_type_tag") {
        v = convert(arg0(), folder, path, depth + 1);
      } else if (fn.rfind("__torch__.", 0) == 0 && o.new_object) {
        auto obj = std::make_shared<Obj>();
        obj->cls = fn;
        obj->path = path;
        v = std::make_shared<Val>();
        v->k = Val::K::Object;
        v->obj = obj;
        converted_[p.get()] = v;  // before the state: it may refer back
        if (o.state) {
          if (o.state->kind != PyObject::Kind::Dict)
            throw Unsupported(zip_.path() + ": object of " + fn + " with a custom __getstate__");
          for (const auto& [k, x] : o.state->dict) {
            if (k->kind != PyObject::Kind::Str) throw Error(zip_.path() + ": an attribute name that is not a string in " + fn);
            obj->attrs.emplace_back(k->str, sub(x, k->str));
          }
        }
        return v;
      } else {
        throw Unsupported(zip_.path() + ": pickled call of " + fn);
      }
      break;
    }
  }
  converted_[p.get()] = v;
  return v;
}

}  // namespace amanda::torchscript
