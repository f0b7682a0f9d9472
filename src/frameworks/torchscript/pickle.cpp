#include "frameworks/torchscript/pickle.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"

namespace amanda::torchscript {

namespace {

// Objects hold their children through shared pointers, so dropping the root of a deep tree would
// run one destructor inside the next. The unpickler's objects are deleted by this deleter instead:
// the outermost deletion on a thread drains a work list of children, and deletions that it
// triggers only add to that list, so the C++ stack never grows with the depth of the tree.
thread_local std::vector<PyRef>* g_pending = nullptr;

void take_children(PyObject& o, std::vector<PyRef>& out) {
  for (auto& c : o.items) out.push_back(std::move(c));
  for (auto& [k, v] : o.dict) {
    out.push_back(std::move(k));
    out.push_back(std::move(v));
  }
  if (o.state) out.push_back(std::move(o.state));
  o.items.clear();
  o.dict.clear();
}

struct FlatDelete {
  void operator()(PyObject* p) const noexcept {
    if (g_pending) {
      take_children(*p, *g_pending);
      delete p;
      return;
    }
    std::vector<PyRef> work;
    g_pending = &work;
    take_children(*p, work);
    delete p;
    while (!work.empty()) {
      PyRef r = std::move(work.back());
      work.pop_back();
      r.reset();  // may run operator() again, which only appends to `work`
    }
    g_pending = nullptr;
  }
};

using Kind = PyObject::Kind;

bool is_container(Kind k) {
  return k == Kind::Tuple || k == Kind::List || k == Kind::Dict || k == Kind::Call || k == Kind::PersistentId;
}

// Strict UTF-8 (no surrogates, no overlong forms, at most U+10FFFF).
bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else return false;
    if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) return false;
    for (size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xc0) != 0x80) return false;
    i += len;
  }
  return true;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Unpickler {
 public:
  Unpickler(std::string_view in, const std::string& name, const UnpickleLimits& limits)
      : in_(in), name_(name), limits_(limits) {}
  ~Unpickler() { Budget::run().refund(BudgetKind::Memory, charged_); }

  PyRef run();
  // Frees what the stack and the memo hold, except objects reachable from `keep`: cycles made
  // through the memo would otherwise outlive the unpickler.
  void release(const PyRef& keep);

 private:
  [[noreturn]] void fail(const std::string& message) const { fail_at(op_, message); }
  [[noreturn]] void fail_at(uint64_t offset, const std::string& message) const {
    throw Error(name_ + ": byte " + std::to_string(offset) + ": " + message);
  }

  // ---- input
  std::string_view take(uint64_t n, const char* what) {
    if (n > in_.size() - pos_)
      fail(std::string(what) + " needs " + std::to_string(n) + " bytes but only " + std::to_string(in_.size() - pos_) +
           " are left");
    auto s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint64_t le(size_t n, const char* what) {
    auto s = take(n, what);
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;) v = v << 8 | static_cast<unsigned char>(s[k]);
    return v;
  }
  // The bytes after a little-endian length of `width` bytes.
  std::string_view counted(size_t width, const char* what) { return take(le(width, what), what); }
  // The argument of a text opcode: the bytes up to the next newline (which is consumed).
  std::string_view line(const char* what) {
    size_t nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) fail(std::string(what) + ": no newline before the end of the pickle");
    auto s = in_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return s;
  }
  int64_t decimal(std::string_view s, const char* what) {
    if (!s.empty() && s[0] == '+') s.remove_prefix(1);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range)
      fail(std::string(what) + ": " + std::string(s.substr(0, 40)) + " is outside the int64 range");
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
      fail(std::string(what) + ": '" + std::string(s.substr(0, 40)) + "' is not a decimal integer");
    return v;
  }
  std::string utf8(std::string_view s, const char* what) {
    if (!valid_utf8(s)) fail(std::string(what) + ": the string is not valid UTF-8");
    return std::string(s);
  }

  // ---- objects
  PyRef make(Kind k) {
    if (++objects_ > limits_.max_objects)
      fail("more than " + std::to_string(limits_.max_objects) + " objects (UnpickleLimits::max_objects)");
    charge(kObjectBytes);
    PyRef o(new PyObject, FlatDelete{});
    o->kind = k;
    o->offset = op_;
    made_.push_back(o);
    return o;
  }
  PyRef make_int(int64_t v) {
    auto o = make(Kind::Int);
    o->i = v;
    return o;
  }
  PyRef make_str(Kind k, std::string s) {
    auto o = make(k);
    o->str = std::move(s);
    return o;
  }

  // The nesting depth below a container, recorded when it is made and raised when something is
  // put in it. A container changed after it was put in another one (possible only through the
  // memo) does not raise its parents' depth, so this bounds ordinary nesting; the tree may still
  // be deeper or cyclic, which FlatDelete and callers' own depth limits deal with.
  size_t height(const PyRef& o) const {
    if (!is_container(o->kind)) return 0;
    auto it = height_.find(o.get());
    return it == height_.end() ? 0 : it->second;
  }
  void raise_height(const PyRef& container, size_t h) {
    if (h > limits_.max_depth)
      fail("objects nest deeper than " + std::to_string(limits_.max_depth) + " levels (UnpickleLimits::max_depth)");
    auto& cur = height_[container.get()];
    cur = std::max(cur, h);
  }
  void contain(const PyRef& container, const PyRef& child) { raise_height(container, height(child) + 1); }
  // A new container: its recorded height replaces what a freed object at the same address left.
  void new_container(const PyRef& o) { height_[o.get()] = 0; }

  // ---- the stack: the objects above the innermost MARK are the current frame
  size_t frame_base() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(PyRef o) {
    if (stack_.size() == stack_.capacity()) charge((stack_.capacity() + 16) * sizeof(PyRef));  // the growth
    stack_.push_back(std::move(o));
  }
  // An object, its control block and its bookkeeping (made_, height_), about.
  static constexpr uint64_t kObjectBytes = sizeof(PyObject) + 96;
  void charge(uint64_t n) {
    if (!Budget::run().try_charge(BudgetKind::Memory, n))
      Budget::run().exceeded(BudgetKind::Memory, n, name_ + ": byte " + std::to_string(op_));
    charged_ += n;
  }
  // None is immutable: one object serves every NONE opcode (a flood of them costs a pointer each).
  PyRef none() {
    if (!none_) none_ = make(Kind::None);
    return none_;
  }
  PyRef pop(const char* what) {
    if (stack_.size() <= frame_base()) fail(std::string(what) + ": stack underflow");
    PyRef o = std::move(stack_.back());
    stack_.pop_back();
    return o;
  }
  PyRef& top(const char* what) {
    if (stack_.size() <= frame_base()) fail(std::string(what) + ": stack underflow");
    return stack_.back();
  }
  // Removes the objects above the innermost MARK and the MARK itself.
  std::vector<PyRef> pop_mark(const char* what) {
    if (marks_.empty()) fail(std::string(what) + ": no MARK before it");
    size_t base = marks_.back();
    marks_.pop_back();
    std::vector<PyRef> items(std::make_move_iterator(stack_.begin() + base), std::make_move_iterator(stack_.end()));
    stack_.resize(base);
    return items;
  }

  PyRef tuple(std::vector<PyRef> items) {
    auto t = make(Kind::Tuple);
    new_container(t);
    for (auto& i : items) contain(t, i);
    t->items = std::move(items);
    return t;
  }
  PyRef call(PyRef callee, PyRef args, bool new_object, const char* what) {
    if (args->kind != Kind::Tuple) fail(std::string(what) + ": the arguments are a " + kind_name(args->kind) + ", not a Tuple");
    auto c = make(Kind::Call);
    new_container(c);
    contain(c, callee);
    contain(c, args);
    c->new_object = new_object;
    c->items = {std::move(callee), std::move(args)};
    return c;
  }
  PyRef global(std::string_view module, std::string_view qualname, const char* what) {
    if (module.empty() || qualname.empty()) fail(std::string(what) + ": an empty module or name");
    return make_str(Kind::Global, utf8(module, what) + "." + utf8(qualname, what));
  }
  // The object that APPEND(S), SETITEM(S), ADDITEMS and BUILD change: the top of the stack.
  PyRef& target(Kind k, const char* what) {
    PyRef& t = top(what);
    if (t->kind != k) fail(std::string(what) + ": the target is a " + kind_name(t->kind) + ", not a " + kind_name(k));
    return t;
  }
  void append(std::vector<PyRef> items, const char* what) {
    PyRef& t = target(Kind::List, what);
    for (auto& i : items) contain(t, i);
    for (auto& i : items) t->items.push_back(std::move(i));
  }
  // Python dicts keep one value per key; keys are not compared here, so a repeated key (which
  // Python would overwrite) stays as a second entry.
  void set_items(const PyRef& d, std::vector<PyRef> kv, const char* what) {
    if (kv.size() % 2) fail(std::string(what) + ": an odd number of keys and values");
    for (auto& i : kv) contain(d, i);
    for (size_t i = 0; i < kv.size(); i += 2) d->dict.emplace_back(std::move(kv[i]), std::move(kv[i + 1]));
  }

  // ---- text arguments
  int64_t long_text(std::string_view s, const char* what) {
    if (!s.empty() && s.back() == 'L') s.remove_suffix(1);  // protocol 0 longs end in L
    return decimal(s, what);
  }
  int64_t long_bytes(std::string_view b, const char* what);
  std::string quoted_string(std::string_view s);
  std::string raw_unicode_escape(std::string_view s);
  void memo_put(uint64_t key, const char* what) {
    auto [it, added] = memo_.try_emplace(key);
    if (added) charge(64);
    it->second = top(what);
  }
  PyRef memo_get(uint64_t key, const char* what) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail(std::string(what) + ": memo key " + std::to_string(key) + " was never put");
    return it->second;
  }

  std::string_view in_;
  const std::string& name_;
  const UnpickleLimits& limits_;
  size_t pos_ = 0;
  uint64_t op_ = 0;  // offset of the opcode being run, for errors and PyObject::offset
  std::vector<PyRef> stack_;
  std::vector<size_t> marks_;  // stack sizes at each MARK
  std::unordered_map<uint64_t, PyRef> memo_;
  // Every object made, so that release() also frees cycles dropped from the stack before the end
  // (a list appended to itself, then popped).
  std::vector<std::weak_ptr<PyObject>> made_;
  std::unordered_map<const PyObject*, size_t> height_;
  size_t objects_ = 0;
  uint64_t charged_ = 0;  // Memory budget charged, refunded when the unpickler ends
  PyRef none_;
};

// LONG1 / LONG4: little-endian two's complement of any length; only values in int64 are kept.
int64_t Unpickler::long_bytes(std::string_view b, const char* what) {
  if (b.empty()) return 0;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(b[k]); };
  unsigned char sign = byte(b.size() - 1) & 0x80 ? 0xff : 0x00;
  // Bytes past the eighth must only extend the sign of the eighth.
  for (size_t k = 8; k < b.size(); ++k)
    if (byte(k) != sign) fail(std::string(what) + ": the integer is outside the int64 range");
  if (b.size() > 8 && (byte(7) & 0x80) != (sign & 0x80)) fail(std::string(what) + ": the integer is outside the int64 range");
  uint64_t v = 0;
  for (size_t k = 0; k < 8; ++k) v |= uint64_t(k < b.size() ? byte(k) : sign) << (8 * k);
  return static_cast<int64_t>(v);
}

// STRING: a Python repr of a byte string, quoted with ' or ", with Python's backslash escapes
// (codecs.escape_decode); the bytes must be UTF-8 (as torch.load's encoding="utf-8" asks).
std::string Unpickler::quoted_string(std::string_view s) {
  if (s.size() < 2 || s.front() != s.back() || (s.front() != '\'' && s.front() != '"'))
    fail("STRING: the argument is not quoted");
  s = s.substr(1, s.size() - 2);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\' || i + 1 == s.size()) {
      if (c == '\\') fail("STRING: a trailing backslash");
      out += c;
      continue;
    }
    char e = s[++i];
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': {
        int h = i + 2 < s.size() ? hex_value(s[i + 1]) : -1, l = h >= 0 ? hex_value(s[i + 2]) : -1;
        if (l < 0) fail("STRING: an invalid \\x escape");
        out += static_cast<char>(h * 16 + l);
        i += 2;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {  // up to three octal digits
          int v = e - '0';
          for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k) v = v * 8 + (s[++i] - '0');
          out += static_cast<char>(v & 0xff);
        } else {  // an unknown escape stays as it is
          out += '\\';
          out += e;
        }
    }
  }
  return utf8(out, "STRING");
}

// UNICODE: raw-unicode-escape. Bytes are Latin-1 code points, except \uXXXX and \UXXXXXXXX after
// an odd number of backslashes.
std::string Unpickler::raw_unicode_escape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c != '\\') {
      append_utf8(out, c);
      ++i;
      continue;
    }
    size_t run = 0;
    while (i < s.size() && s[i] == '\\') ++run, ++i;
    if (run % 2 == 0 || i == s.size() || (s[i] != 'u' && s[i] != 'U')) {
      out.append(run, '\\');
      continue;
    }
    out.append(run - 1, '\\');
    size_t digits = s[i] == 'u' ? 4 : 8;
    if (s.size() - i - 1 < digits) fail("UNICODE: a truncated \\u escape");
    uint32_t cp = 0;
    for (size_t k = 1; k <= digits; ++k) {
      int h = hex_value(s[i + k]);
      if (h < 0) fail("UNICODE: an invalid \\u escape");
      cp = cp << 4 | static_cast<uint32_t>(h);
    }
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail("UNICODE: \\u escape of an invalid code point");
    append_utf8(out, cp);
    i += 1 + digits;
  }
  return out;
}

PyRef Unpickler::run() {
  while (pos_ < in_.size()) {
    op_ = pos_;
    auto code = static_cast<unsigned char>(in_[pos_++]);
    switch (code) {
      // ---- framing and control
      case 0x80: {  // PROTO
        auto v = le(1, "PROTO");
        if (v > 5) fail("unsupported pickle protocol " + std::to_string(v));
        break;
      }
      case 0x95: {  // FRAME: frames only group opcodes, the length is checked and skipped
        auto n = le(8, "FRAME");
        if (n > in_.size() - pos_) fail("FRAME of " + std::to_string(n) + " bytes runs past the end of the pickle");
        break;
      }
      case '.': {  // STOP
        return pop("STOP");
      }
      case '(':  // MARK
        if (marks_.size() >= limits_.max_depth)
          fail("more than " + std::to_string(limits_.max_depth) + " nested MARKs (UnpickleLimits::max_depth)");
        marks_.push_back(stack_.size());
        break;
      case '0':  // POP: an empty frame pops its MARK, as Python does
        if (stack_.size() > frame_base()) stack_.pop_back();
        else pop_mark("POP");
        break;
      case '1':  // POP_MARK
        pop_mark("POP_MARK");
        break;
      case '2':  // DUP
        push(top("DUP"));
        break;

      // ---- scalars
      case 'N': push(none()); break;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        auto o = make(Kind::Bool);
        o->b = code == 0x88;
        push(o);
        break;
      }
      case 'I': {  // INT: protocol 0 writes True and False as 01 and 00
        auto s = line("INT");
        if (s == "00" || s == "01") {
          auto o = make(Kind::Bool);
          o->b = s == "01";
          push(o);
        } else {
          push(make_int(decimal(s, "INT")));
        }
        break;
      }
      case 'J': push(make_int(static_cast<int32_t>(le(4, "BININT")))); break;
      case 'K': push(make_int(static_cast<int64_t>(le(1, "BININT1")))); break;
      case 'M': push(make_int(static_cast<int64_t>(le(2, "BININT2")))); break;
      case 'L': push(make_int(long_text(line("LONG"), "LONG"))); break;
      case 0x8a: {  // LONG1
        auto n = le(1, "LONG1");
        push(make_int(long_bytes(take(n, "LONG1"), "LONG1")));
        break;
      }
      case 0x8b: {  // LONG4
        auto n = static_cast<int32_t>(le(4, "LONG4"));
        if (n < 0) fail("LONG4: negative length " + std::to_string(n));
        push(make_int(long_bytes(take(static_cast<uint64_t>(n), "LONG4"), "LONG4")));
        break;
      }
      case 'F': {  // FLOAT: repr() text
        auto s = line("FLOAT");
        auto o = make(Kind::Float);
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), o->f);
        if (ec != std::errc() || end != s.data() + s.size())
          fail("FLOAT: '" + std::string(s.substr(0, 40)) + "' is not a number");
        push(o);
        break;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        auto s = take(8, "BINFLOAT");
        uint64_t bits = 0;
        for (char c : s) bits = bits << 8 | static_cast<unsigned char>(c);
        auto o = make(Kind::Float);
        std::memcpy(&o->f, &bits, sizeof bits);
        push(o);
        break;
      }

      // ---- strings and bytes (lengths are checked against the input before anything is copied)
      case 'S': push(make_str(Kind::Str, quoted_string(line("STRING")))); break;
      case 'T': {  // BINSTRING
        auto n = static_cast<int32_t>(le(4, "BINSTRING"));
        if (n < 0) fail("BINSTRING: negative length " + std::to_string(n));
        push(make_str(Kind::Str, utf8(take(static_cast<uint64_t>(n), "BINSTRING"), "BINSTRING")));
        break;
      }
      case 'U': push(make_str(Kind::Str, utf8(counted(1, "SHORT_BINSTRING"), "SHORT_BINSTRING"))); break;
      case 'V': push(make_str(Kind::Str, raw_unicode_escape(line("UNICODE")))); break;
      case 'X': push(make_str(Kind::Str, utf8(counted(4, "BINUNICODE"), "BINUNICODE"))); break;
      case 0x8c: push(make_str(Kind::Str, utf8(counted(1, "SHORT_BINUNICODE"), "SHORT_BINUNICODE"))); break;
      case 0x8d: push(make_str(Kind::Str, utf8(counted(8, "BINUNICODE8"), "BINUNICODE8"))); break;
      case 'B': push(make_str(Kind::Bytes, std::string(counted(4, "BINBYTES")))); break;
      case 'C': push(make_str(Kind::Bytes, std::string(counted(1, "SHORT_BINBYTES")))); break;
      case 0x8e: push(make_str(Kind::Bytes, std::string(counted(8, "BINBYTES8")))); break;
      case 0x96: push(make_str(Kind::Bytes, std::string(counted(8, "BYTEARRAY8")))); break;
      case 0x97: fail("NEXT_BUFFER: out-of-band buffers are not supported");
      case 0x98: top("READONLY_BUFFER"); break;  // a read-only view of the bytes on the stack: the same bytes

      // ---- tuples, lists, dicts, sets (sets become Lists)
      case ')': push(tuple({})); break;
      case 't': push(tuple(pop_mark("TUPLE"))); break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        size_t n = code - 0x84u;
        std::vector<PyRef> items(n);
        for (size_t k = n; k-- > 0;) items[k] = pop("TUPLE1/2/3");
        push(tuple(std::move(items)));
        break;
      }
      case ']':
      case 0x8f: {  // EMPTY_LIST, EMPTY_SET
        auto l = make(Kind::List);
        new_container(l);
        push(l);
        break;
      }
      case 'l':
      case 0x91: {  // LIST, FROZENSET
        auto items = pop_mark(code == 'l' ? "LIST" : "FROZENSET");
        auto l = make(Kind::List);
        new_container(l);
        for (auto& i : items) contain(l, i);
        l->items = std::move(items);
        push(l);
        break;
      }
      case 'a': {  // APPEND
        auto v = pop("APPEND");
        append({std::move(v)}, "APPEND");
        break;
      }
      case 'e': append(pop_mark("APPENDS"), "APPENDS"); break;
      case 0x90: append(pop_mark("ADDITEMS"), "ADDITEMS"); break;
      case '}': {
        auto d = make(Kind::Dict);
        new_container(d);
        push(d);
        break;
      }
      case 'd': {  // DICT
        auto kv = pop_mark("DICT");
        auto d = make(Kind::Dict);
        new_container(d);
        set_items(d, std::move(kv), "DICT");
        push(d);
        break;
      }
      case 's': {  // SETITEM
        auto v = pop("SETITEM");
        auto k = pop("SETITEM");
        set_items(target(Kind::Dict, "SETITEM"), {std::move(k), std::move(v)}, "SETITEM");
        break;
      }
      case 'u': {  // SETITEMS
        auto kv = pop_mark("SETITEMS");
        set_items(target(Kind::Dict, "SETITEMS"), std::move(kv), "SETITEMS");
        break;
      }

      // ---- classes, calls, objects
      case 'c': {  // GLOBAL
        auto module = line("GLOBAL");
        auto qualname = line("GLOBAL");
        push(global(module, qualname, "GLOBAL"));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        auto qualname = pop("STACK_GLOBAL");
        auto module = pop("STACK_GLOBAL");
        if (module->kind != Kind::Str || qualname->kind != Kind::Str) fail("STACK_GLOBAL: the module and name are not Strs");
        push(global(module->str, qualname->str, "STACK_GLOBAL"));
        break;
      }
      case 'R': {  // REDUCE
        auto args = pop("REDUCE");
        auto callee = pop("REDUCE");
        push(call(std::move(callee), std::move(args), false, "REDUCE"));
        break;
      }
      case 0x81: {  // NEWOBJ
        auto args = pop("NEWOBJ");
        auto cls = pop("NEWOBJ");
        push(call(std::move(cls), std::move(args), true, "NEWOBJ"));
        break;
      }
      case 0x92: {  // NEWOBJ_EX: keyword arguments have no place in a Call, so only none are allowed
        auto kwargs = pop("NEWOBJ_EX");
        auto args = pop("NEWOBJ_EX");
        auto cls = pop("NEWOBJ_EX");
        if (kwargs->kind != Kind::Dict || !kwargs->dict.empty()) fail("NEWOBJ_EX: keyword arguments are not supported");
        push(call(std::move(cls), std::move(args), true, "NEWOBJ_EX"));
        break;
      }
      case 'i': {  // INST: module and name lines, the arguments above the MARK
        auto module = line("INST");
        auto qualname = line("INST");
        auto args = tuple(pop_mark("INST"));
        push(call(global(module, qualname, "INST"), std::move(args), false, "INST"));
        break;
      }
      case 'o': {  // OBJ: the class then the arguments above the MARK
        auto items = pop_mark("OBJ");
        if (items.empty()) fail("OBJ: no class after the MARK");
        auto cls = std::move(items.front());
        items.erase(items.begin());
        push(call(std::move(cls), tuple(std::move(items)), false, "OBJ"));
        break;
      }
      case 'b': {  // BUILD
        auto state = pop("BUILD");
        PyRef& t = target(Kind::Call, "BUILD");
        if (t->state) fail("BUILD: the object already has a state (from byte " + std::to_string(t->state->offset) + ")");
        contain(t, state);
        t->state = std::move(state);
        break;
      }
      case 'P': {  // PERSID: an ASCII id on the line
        auto id = make_str(Kind::Str, utf8(line("PERSID"), "PERSID"));
        auto p = make(Kind::PersistentId);
        new_container(p);
        contain(p, id);
        p->items = {std::move(id)};
        push(p);
        break;
      }
      case 'Q': {  // BINPERSID
        auto id = pop("BINPERSID");
        auto p = make(Kind::PersistentId);
        new_container(p);
        contain(p, id);
        p->items = {std::move(id)};
        push(p);
        break;
      }
      case 0x82:
      case 0x83:
      case 0x84:
        fail("EXT1/EXT2/EXT4: the copyreg extension registry is not supported");

      // ---- the memo
      case 'p': {  // PUT
        auto key = decimal(line("PUT"), "PUT");
        if (key < 0) fail("PUT: negative memo key");
        memo_put(static_cast<uint64_t>(key), "PUT");
        break;
      }
      case 'q': memo_put(le(1, "BINPUT"), "BINPUT"); break;
      case 'r': memo_put(le(4, "LONG_BINPUT"), "LONG_BINPUT"); break;
      case 0x94: memo_put(memo_.size(), "MEMOIZE"); break;
      case 'g': {  // GET
        auto key = decimal(line("GET"), "GET");
        if (key < 0) fail("GET: negative memo key");
        push(memo_get(static_cast<uint64_t>(key), "GET"));
        break;
      }
      case 'h': push(memo_get(le(1, "BINGET"), "BINGET")); break;
      case 'j': push(memo_get(le(4, "LONG_BINGET"), "LONG_BINGET")); break;

      default: {
        static const char hex[] = "0123456789abcdef";
        fail(std::string("unknown opcode 0x") + hex[code >> 4] + hex[code & 15]);
      }
    }
  }
  fail_at(pos_, "the pickle ends without STOP");
}

// ---- describe()

constexpr size_t kDescribeBudget = 300;  // characters, then "..."
constexpr size_t kDescribeItems = 6;      // elements of a container shown
constexpr size_t kDescribeString = 40;    // characters of a Str / Bytes shown

void quote(std::string& out, std::string_view s) {
  out += '\'';
  for (size_t i = 0; i < s.size() && i < kDescribeString; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kDescribeString) out += "...";
  out += '\'';
}

void describe_into(std::string& out, const PyObject& o, int depth) {
  if (out.size() >= kDescribeBudget) return;
  auto list = [&](const std::vector<PyRef>& items, const char* open, const char* close, bool tuple) {
    out += open;
    if (depth <= 0 && !items.empty()) {
      out += "...";
    } else {
      for (size_t k = 0; k < items.size() && k < kDescribeItems; ++k) {
        if (k) out += ", ";
        if (items[k]) describe_into(out, *items[k], depth - 1);
      }
      if (items.size() > kDescribeItems) out += ", ...";
      if (tuple && items.size() == 1) out += ',';
    }
    out += close;
  };
  switch (o.kind) {
    case Kind::None: out += "None"; break;
    case Kind::Bool: out += o.b ? "True" : "False"; break;
    case Kind::Int: out += std::to_string(o.i); break;
    case Kind::Float: {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, o.f);
      out.append(buf, r.ptr);
      break;
    }
    case Kind::Str: quote(out, o.str); break;
    case Kind::Bytes:
      out += 'b';
      quote(out, o.str);
      break;
    case Kind::Global: out += o.str.substr(0, 100); break;
    case Kind::Tuple: list(o.items, "(", ")", true); break;
    case Kind::List: list(o.items, "[", "]", false); break;
    case Kind::Dict:
      out += '{';
      if (depth <= 0 && !o.dict.empty()) {
        out += "...";
      } else {
        for (size_t k = 0; k < o.dict.size() && k < kDescribeItems; ++k) {
          if (k) out += ", ";
          if (o.dict[k].first) describe_into(out, *o.dict[k].first, depth - 1);
          out += ": ";
          if (o.dict[k].second) describe_into(out, *o.dict[k].second, depth - 1);
        }
        if (o.dict.size() > kDescribeItems) out += ", ...";
      }
      out += '}';
      break;
    case Kind::Call:
      list(o.items, o.new_object ? "New(" : "Call(", o.state ? ", state=...)" : ")", false);
      break;
    case Kind::PersistentId: list(o.items, "PersistentId(", ")", false); break;
  }
}

}  // namespace

void Unpickler::release(const PyRef& keep) {
  std::unordered_set<const PyObject*> kept;
  std::vector<const PyObject*> walk;
  if (keep) walk.push_back(keep.get());
  while (!walk.empty()) {
    const PyObject* o = walk.back();
    walk.pop_back();
    if (!kept.insert(o).second) continue;
    for (auto& c : o->items) walk.push_back(c.get());
    for (auto& [k, v] : o->dict) {
      walk.push_back(k.get());
      walk.push_back(v.get());
    }
    if (o->state) walk.push_back(o->state.get());
  }
  // Takes the children out of every other object: each reference is moved out once, so this ends
  // even on cycles, and the objects are freed as their last reference goes.
  std::vector<PyRef> work = std::move(stack_);
  for (auto& [key, o] : memo_) work.push_back(std::move(o));
  memo_.clear();
  for (const auto& w : made_)
    if (PyRef o = w.lock()) work.push_back(std::move(o));
  made_.clear();
  while (!work.empty()) {
    PyRef o = std::move(work.back());
    work.pop_back();
    if (o && !kept.count(o.get())) take_children(*o, work);
  }
}

PyRef unpickle(std::string_view bytes, const std::string& name, const UnpickleLimits& limits) {
  Unpickler u(bytes, name, limits);
  PyRef result;
  try {
    result = u.run();
  } catch (...) {
    u.release(nullptr);
    throw;
  }
  u.release(result);
  return result;
}

const char* kind_name(PyObject::Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "Bool";
    case Kind::Int: return "Int";
    case Kind::Float: return "Float";
    case Kind::Str: return "Str";
    case Kind::Bytes: return "Bytes";
    case Kind::Tuple: return "Tuple";
    case Kind::List: return "List";
    case Kind::Dict: return "Dict";
    case Kind::Global: return "Global";
    case Kind::Call: return "Call";
    case Kind::PersistentId: return "PersistentId";
  }
  return "?";
}

std::string describe(const PyObject& o, int depth) {
  std::string out;
  describe_into(out, o, depth);
  if (out.size() > kDescribeBudget) {
    out.resize(kDescribeBudget);
    out += "...";
  }
  return out;
}

void dismantle(PyRef root) {
  std::vector<PyRef> work{std::move(root)};
  while (!work.empty()) {
    PyRef o = std::move(work.back());
    work.pop_back();
    if (!o) continue;
    for (auto& c : o->items) work.push_back(std::move(c));
    for (auto& [k, v] : o->dict) {
      work.push_back(std::move(k));
      work.push_back(std::move(v));
    }
    if (o->state) work.push_back(std::move(o->state));
    o->items.clear();
    o->dict.clear();
  }
}

}  // namespace amanda::torchscript
