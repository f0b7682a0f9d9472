// The unpickler on pickles that Python wrote (the bytes are copied here with the Python that made
// them) and on broken ones: every truncation, unknown opcodes, stack underflow, unknown memo keys,
// huge lengths, nesting beyond the limits, random byte changes.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "amanda/support/diagnostics.h"
#include "frameworks/torchscript/pickle.h"

using namespace amanda;
using namespace amanda::torchscript;
using Kind = PyObject::Kind;

namespace {

template <size_t N>
std::string bytes(const char (&s)[N]) {
  return std::string(s, N - 1);
}

// pickle.dumps([1, -2, 300, 70000, 2**40, -2**63, 1.5, 'h\u00e9llo', b'\x00\x01', None, True,
//               False, (1,), (1, 2), (1, 2, 3), (), {'a': 1}], protocol=2)
const std::string kProto2 = bytes(
    "\x80\x02]q\x00(K\x01J\xfe\xff\xff\xffM,\x01Jp\x11\x01\x00\x8a\x06\x00\x00\x00\x00\x00\x01\x8a\x08\x00"
    "\x00\x00\x00\x00\x00\x00\x80G\x3f\xf8\x00\x00\x00\x00\x00\x00X\x06\x00\x00\x00h\xc3\xa9lloq\x01"
    "c_codecs\nencode\nq\x02X\x02\x00\x00\x00\x00\x01q\x03X\x06\x00\x00\x00latin1q\x04\x86q\x05Rq\x06N\x88\x89K\x01"
    "\x85q\x07K\x01K\x02\x86q\x08K\x01K\x02K\x03\x87q\x09)}q\x0aX\x01\x00\x00\x00"
    "aq\x0bK\x01se.");

// pickle.dumps([1, -2, 2**40, 1.5, 'h\u00e9\n', None, True, (1, 2), {'a': 1}], protocol=0)
const std::string kProto0 = bytes(
    "(lp0\nI1\naI-2\naL1099511627776L\naF1.5\naVh\xe9\\u000a\np1\naNaI01\na(I1\nI2\ntp2\na(dp3\nVa\np4\nI1\nsa.");

// pickle.dumps({'k': frozenset([7]), 's': {8}, 'x': [b'ab', 2.5]}, protocol=4)
const std::string kProto4 = bytes(
    "\x80\x04\x95.\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01k\x94(K\x07\x91\x94\x8c\x01s\x94\x8f\x94(K\x08"
    "\x90\x8c\x01x\x94]\x94(C\x02"
    "ab\x94G@\x04\x00\x00\x00\x00\x00\x00"
    "eu.");

// pickle.dumps([b'\x00\x01', bytearray(b'xy')], protocol=5)
const std::string kProto5 = bytes(
    "\x80\x05\x95\x16\x00\x00\x00\x00\x00\x00\x00]\x94(C\x02\x00\x01\x94\x96\x02\x00\x00\x00\x00\x00\x00\x00"
    "xy\x94"
    "e.");

// pickle.dumps((2**63-1, -2**63, -1, 255, 2**31), protocol=2)
const std::string kLongs = bytes(
    "\x80\x02(\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80J\xff\xff\xff\xff"
    "K\xff\x8a\x05\x00\x00\x00\x80\x00tq\x00.");

// A tensor in a dict as torch.save writes it: pickle.Pickler(f, protocol=2) with
// persistent_id(storage) = ('storage', torch.FloatStorage, '0', 'cpu', 6) on
// {'weight': <tensor reduced to torch._utils._rebuild_tensor_v2(storage, 0, (2, 3), (3, 1), False,
//  collections.OrderedDict())>, 'training': False}
const std::string kTensor = bytes(
    "\x80\x02}q\x00(X\x06\x00\x00\x00weightq\x01"
    "ctorch._utils\x0a_rebuild_tensor_v2\x0aq\x02((X\x07\x00\x00\x00storageq\x03"
    "ctorch\x0a"
    "FloatStorage\x0aq\x04X\x01\x00\x00\x00"
    "0q\x05X\x03\x00\x00\x00"
    "cpuq\x06K\x06tq\x07QK\x00K\x02K\x03\x86q\x08K\x03K\x01\x86q\x09\x89"
    "ccollections\x0aOrderedDict\x0aq\x0a)Rq\x0btq\x0cRq\x0dX\x08\x00\x00\x00trainingq\x0e\x89u.");

// A module object as torch.jit.save writes one: class Conv in module __torch__.m, c = Conv(),
// c.training = True, c.k = 3; pickle.dumps(c, protocol=2) (NEWOBJ, BUILD) and protocol=4
// (STACK_GLOBAL, MEMOIZE, FRAME).
const std::string kObject2 = bytes(
    "\x80\x02"
    "c__torch__.m\x0a"
    "Conv\x0aq\x00)\x81q\x01}q\x02(X\x08\x00\x00\x00trainingq\x03\x88X\x01\x00\x00\x00kq\x04K\x03ub.");
const std::string kObject4 = bytes(
    "\x80\x04\x95"
    "2\x00\x00\x00\x00\x00\x00\x00\x8c\x0b__torch__.m\x94\x8c\x04"
    "Conv\x94\x93\x94)\x81\x94}\x94(\x8c\x08training\x94\x88\x8c\x01k\x94K\x03ub.");

std::string error_of(const std::string& p, const UnpickleLimits& limits = {}) {
  try {
    unpickle(p, "t.pkl", limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(pickle, text) EXPECT_NE(error_of(pickle).find(text), std::string::npos) << error_of(pickle)

TEST(Pickle, Protocol2Scalars) {
  auto r = unpickle(kProto2, "t.pkl");
  ASSERT_EQ(r->kind, Kind::List);
  ASSERT_EQ(r->items.size(), 17u);
  auto& it = r->items;
  EXPECT_EQ(it[0]->i, 1);
  EXPECT_EQ(it[1]->i, -2);
  EXPECT_EQ(it[2]->i, 300);
  EXPECT_EQ(it[3]->i, 70000);
  EXPECT_EQ(it[4]->i, int64_t(1) << 40);
  EXPECT_EQ(it[5]->i, INT64_MIN);
  EXPECT_EQ(it[6]->kind, Kind::Float);
  EXPECT_EQ(it[6]->f, 1.5);
  EXPECT_EQ(it[7]->kind, Kind::Str);
  EXPECT_EQ(it[7]->str, "h\xc3\xa9llo");
  // Protocol 2 writes bytes as _codecs.encode('\x00\x01', 'latin1'): a REDUCE.
  ASSERT_EQ(it[8]->kind, Kind::Call);
  EXPECT_FALSE(it[8]->new_object);
  EXPECT_EQ(it[8]->items[0]->kind, Kind::Global);
  EXPECT_EQ(it[8]->items[0]->str, "_codecs.encode");
  EXPECT_EQ(it[8]->items[1]->items.size(), 2u);
  EXPECT_EQ(it[8]->items[1]->items[0]->str, std::string("\x00\x01", 2));
  EXPECT_EQ(it[9]->kind, Kind::None);
  EXPECT_EQ(it[10]->kind, Kind::Bool);
  EXPECT_TRUE(it[10]->b);
  EXPECT_FALSE(it[11]->b);
  for (size_t k = 0; k < 4; ++k) {
    ASSERT_EQ(it[12 + k]->kind, Kind::Tuple);
    EXPECT_EQ(it[12 + k]->items.size(), k == 3 ? 0u : k + 1);
  }
  ASSERT_EQ(it[16]->kind, Kind::Dict);
  ASSERT_EQ(it[16]->dict.size(), 1u);
  EXPECT_EQ(it[16]->dict[0].first->str, "a");
  EXPECT_EQ(it[16]->dict[0].second->i, 1);
  // Offsets of the opcodes that made the objects.
  EXPECT_EQ(r->offset, 2u);
  EXPECT_EQ(it[0]->offset, 6u);
}

TEST(Pickle, Protocol0Text) {
  auto r = unpickle(kProto0, "t.pkl");
  ASSERT_EQ(r->kind, Kind::List);
  ASSERT_EQ(r->items.size(), 9u);
  auto& it = r->items;
  EXPECT_EQ(it[0]->i, 1);
  EXPECT_EQ(it[1]->i, -2);
  EXPECT_EQ(it[2]->i, int64_t(1) << 40);
  EXPECT_EQ(it[3]->f, 1.5);
  EXPECT_EQ(it[4]->str, "h\xc3\xa9\n");  // raw-unicode-escape: Latin-1 byte and \u000a
  EXPECT_EQ(it[5]->kind, Kind::None);
  EXPECT_EQ(it[6]->kind, Kind::Bool);  // I01
  EXPECT_EQ(it[7]->items.size(), 2u);
  EXPECT_EQ(it[8]->dict.at(0).first->str, "a");
}

TEST(Pickle, Protocol4FramesSetsAndBytes) {
  auto r = unpickle(kProto4, "t.pkl");
  ASSERT_EQ(r->kind, Kind::Dict);
  ASSERT_EQ(r->dict.size(), 3u);
  EXPECT_EQ(r->dict[0].first->str, "k");
  ASSERT_EQ(r->dict[0].second->kind, Kind::List);  // frozenset
  EXPECT_EQ(r->dict[0].second->items.at(0)->i, 7);
  ASSERT_EQ(r->dict[1].second->kind, Kind::List);  // set
  EXPECT_EQ(r->dict[1].second->items.at(0)->i, 8);
  auto& x = r->dict[2].second->items;
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0]->kind, Kind::Bytes);
  EXPECT_EQ(x[0]->str, "ab");
  EXPECT_EQ(x[1]->f, 2.5);
}

TEST(Pickle, Protocol5ByteArray) {
  auto r = unpickle(kProto5, "t.pkl");
  ASSERT_EQ(r->items.size(), 2u);
  EXPECT_EQ(r->items[0]->kind, Kind::Bytes);
  EXPECT_EQ(r->items[0]->str, std::string("\x00\x01", 2));
  EXPECT_EQ(r->items[1]->kind, Kind::Bytes);
  EXPECT_EQ(r->items[1]->str, "xy");
}

TEST(Pickle, LongsAtTheInt64Limits) {
  auto r = unpickle(kLongs, "t.pkl");
  ASSERT_EQ(r->items.size(), 5u);
  EXPECT_EQ(r->items[0]->i, INT64_MAX);
  EXPECT_EQ(r->items[1]->i, INT64_MIN);
  EXPECT_EQ(r->items[2]->i, -1);
  EXPECT_EQ(r->items[3]->i, 255);
  EXPECT_EQ(r->items[4]->i, int64_t(1) << 31);
  // 2**63 (pickle.dumps(2**63, protocol=2)) and -2**63-1 do not fit.
  EXPECT_ERROR(bytes("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."), "byte 2: LONG1: the integer is outside the int64 range");
  EXPECT_ERROR(bytes("\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\xff."), "outside the int64 range");
  EXPECT_ERROR(bytes("L99999999999999999999L\n."), "outside the int64 range");
  // Nine bytes that only extend the sign are fine: -1, and LONG4 with a zero length is 0.
  EXPECT_EQ(unpickle(bytes("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff."), "t")->i, -1);
  EXPECT_EQ(unpickle(bytes("\x8b\x00\x00\x00\x00."), "t")->i, 0);
}

TEST(Pickle, TensorAsTorchWritesIt) {
  auto r = unpickle(kTensor, "t.pkl");
  ASSERT_EQ(r->kind, Kind::Dict);
  ASSERT_EQ(r->dict.size(), 2u);
  EXPECT_EQ(r->dict[0].first->str, "weight");
  const PyObject& t = *r->dict[0].second;
  ASSERT_EQ(t.kind, Kind::Call);
  EXPECT_EQ(t.items[0]->str, "torch._utils._rebuild_tensor_v2");
  const auto& args = t.items[1]->items;
  ASSERT_EQ(args.size(), 6u);
  ASSERT_EQ(args[0]->kind, Kind::PersistentId);
  const auto& id = args[0]->items[0]->items;
  ASSERT_EQ(id.size(), 5u);
  EXPECT_EQ(id[0]->str, "storage");
  EXPECT_EQ(id[1]->kind, Kind::Global);
  EXPECT_EQ(id[1]->str, "torch.FloatStorage");
  EXPECT_EQ(id[2]->str, "0");
  EXPECT_EQ(id[3]->str, "cpu");
  EXPECT_EQ(id[4]->i, 6);
  EXPECT_EQ(args[2]->items.size(), 2u);
  EXPECT_EQ(args[3]->items[0]->i, 3);
  EXPECT_EQ(args[5]->items[0]->str, "collections.OrderedDict");
  EXPECT_EQ(describe(t), "Call(torch._utils._rebuild_tensor_v2, (PersistentId(...), 0, (...), (...), False, Call(...)))");
  EXPECT_EQ(describe(*r, 1), "{'weight': Call(...), 'training': False}");
}

TEST(Pickle, ModuleObjectNewObjAndBuild) {
  for (auto* p : {&kObject2, &kObject4}) {
    auto r = unpickle(*p, "t.pkl");
    ASSERT_EQ(r->kind, Kind::Call);
    EXPECT_TRUE(r->new_object);
    EXPECT_EQ(r->items[0]->str, "__torch__.m.Conv");
    EXPECT_TRUE(r->items[1]->items.empty());
    ASSERT_NE(r->state, nullptr);
    ASSERT_EQ(r->state->dict.size(), 2u);
    EXPECT_EQ(r->state->dict[0].first->str, "training");
    EXPECT_TRUE(r->state->dict[0].second->b);
    EXPECT_EQ(r->state->dict[1].second->i, 3);
  }
}

TEST(Pickle, MemoReferencesAlias) {
  // a = [1]; pickle.dumps([a, a], protocol=2)
  auto r = unpickle(bytes("\x80\x02]q\x00(]q\x01K\x01" "ah\x01" "e."), "t.pkl");
  ASSERT_EQ(r->items.size(), 2u);
  EXPECT_EQ(r->items[0].get(), r->items[1].get());
  // l = []; l.append(l); pickle.dumps(l, protocol=2): a cycle.
  auto c = unpickle(bytes("\x80\x02]q\x00h\x00" "a."), "t.pkl");
  ASSERT_EQ(c->items.size(), 1u);
  EXPECT_EQ(c->items[0].get(), c.get());
  EXPECT_EQ(describe(*c, 500), std::string(300, '[') + "...");  // bounded
  dismantle(std::move(c));
}

TEST(Pickle, TrailingBytesAfterStopAreIgnored) {
  EXPECT_EQ(unpickle(bytes("K\x05.garbage\xff"), "t")->i, 5);
}

TEST(Pickle, DescribeIsBounded) {
  // 5000 strings of 100 characters in a list.
  std::string p = "(";
  for (int k = 0; k < 5000; ++k) p += "\x8c\x64" + std::string(100, 'a' + k % 26);
  p += "l.";
  auto r = unpickle(p, "t");
  ASSERT_EQ(r->items.size(), 5000u);
  auto d = describe(*r, 1000);
  EXPECT_LE(d.size(), 310u);
  EXPECT_EQ(d.substr(0, 48), "['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...', ");
  EXPECT_EQ(kind_name(Kind::PersistentId), std::string("PersistentId"));
}

TEST(PickleBad, Empty) { EXPECT_EQ(error_of(""), "t.pkl: byte 0: the pickle ends without STOP"); }

TEST(PickleBad, EveryTruncationFails) {
  for (auto* p : {&kProto2, &kProto0, &kProto4, &kProto5, &kLongs, &kTensor, &kObject2, &kObject4}) {
    ASSERT_EQ(error_of(*p), "");
    for (size_t n = 0; n < p->size(); ++n) EXPECT_NE(error_of(p->substr(0, n)), "") << "prefix " << n;
  }
}

TEST(PickleBad, UnknownOpcode) { EXPECT_EQ(error_of(bytes("\x80\x02\xff.")), "t.pkl: byte 2: unknown opcode 0xff"); }

TEST(PickleBad, StackUnderflow) {
  EXPECT_EQ(error_of("."), "t.pkl: byte 0: STOP: stack underflow");
  EXPECT_ERROR(bytes("\x80\x02K\x01" "a."), "byte 4: APPEND: stack underflow");
  EXPECT_ERROR("](a.", "byte 2: APPEND: stack underflow");  // the list is below the MARK
  EXPECT_ERROR("(K\x01R.", "REDUCE: stack underflow");
  EXPECT_ERROR("t.", "TUPLE: no MARK before it");
  EXPECT_ERROR("\x86.", "TUPLE1/2/3: stack underflow");
  EXPECT_ERROR("\x32.", "DUP: stack underflow");
}

TEST(PickleBad, MemoKeyNeverPut) {
  EXPECT_EQ(error_of(bytes("\x80\x02h\x05.")), "t.pkl: byte 2: BINGET: memo key 5 was never put");
  EXPECT_ERROR(bytes("j\x00\x00\x00\x01."), "memo key 16777216 was never put");
  EXPECT_ERROR("g7\n.", "GET: memo key 7 was never put");
  EXPECT_ERROR(bytes("q\x00."), "BINPUT: stack underflow");
}

TEST(PickleBad, HugeLengths) {
  EXPECT_EQ(error_of(bytes("X\xff\xff\xff\xff" "abc.")),
            "t.pkl: byte 0: BINUNICODE needs 4294967295 bytes but only 4 are left");
  EXPECT_ERROR(bytes("\x8d\xff\xff\xff\xff\xff\xff\xff\x7f" "abc."), "BINUNICODE8 needs 9223372036854775807 bytes");
  EXPECT_ERROR(bytes("\x8e\xff\xff\xff\xff\xff\xff\xff\xff" "abc."), "BINBYTES8 needs 18446744073709551615 bytes");
  EXPECT_ERROR(bytes("\x96\x00\x00\x00\x00\x00\x00\x00\x80."), "BYTEARRAY8 needs");
  EXPECT_ERROR(bytes("T\xff\xff\xff\xff."), "BINSTRING: negative length");
  EXPECT_ERROR(bytes("\x8b\x00\x00\x00\x80."), "LONG4: negative length");
  EXPECT_ERROR(bytes("\x8b\xff\xff\xff\x7f."), "LONG4 needs 2147483647 bytes");
  EXPECT_ERROR(bytes("\x95\xff\xff\xff\xff\xff\xff\xff\xff" "N."), "FRAME of 18446744073709551615 bytes runs past");
}

TEST(PickleBad, NestingBeyondTheLimits) {
  // 2000 MARKs
  std::string marks(2000, '(');
  EXPECT_ERROR(marks, "byte 1000: more than 1000 nested MARKs");
  // [[[...]]] 2000 deep as Python writes it: the lists first, then the APPENDs.
  std::string lists(2000, ']');
  lists.append(1999, 'a');
  EXPECT_ERROR(lists, "objects nest deeper than 1000 levels");
  // ((((...)))) through TUPLE1
  std::string tuples(1, ')');
  tuples.append(2000, '\x85');
  EXPECT_ERROR(tuples, "objects nest deeper than 1000 levels");
  UnpickleLimits small;
  small.max_depth = 3;
  EXPECT_NE(error_of(kTensor, small).find("nest deeper than 3 levels"), std::string::npos) << error_of(kTensor, small);
  small.max_depth = 1000;
  small.max_objects = 10;
  EXPECT_NE(error_of(kProto2, small).find("more than 10 objects"), std::string::npos) << error_of(kProto2, small);
}

TEST(PickleBad, DeepChainThroughTheMemoIsFreedWithoutRecursion) {
  // A list chain 300000 deep made by appending to lists already inside others (through the memo):
  // root = l0; for k: l_k+1 = []; l_k.append(l_k+1). The depth bookkeeping cannot see this, so the
  // unpickler's objects are freed without recursing (a recursive free would overflow the stack).
  std::string p = bytes("]r\x00\x00\x00\x00");
  auto le32 = [](uint32_t v) {
    std::string s;
    for (int k = 0; k < 4; ++k) s += static_cast<char>(v >> (8 * k) & 0xff);
    return s;
  };
  const uint32_t n = 300000;
  for (uint32_t k = 0; k < n; ++k) {
    p += 'j';
    p += le32(k);
    p += "]r";
    p += le32(k + 1);
    p += "a0";
  }
  p += ".";
  auto r = unpickle(p, "t");
  size_t depth = 0;
  for (const PyObject* o = r.get(); !o->items.empty(); o = o->items[0].get()) ++depth;
  EXPECT_EQ(depth, n);
  r.reset();
  // The same after an error: the stack and memo are freed on the way out.
  p.pop_back();
  EXPECT_ERROR(p, "ends without STOP");
}

TEST(PickleBad, WrongTargets) {
  EXPECT_ERROR("}}b.", "byte 2: BUILD: the target is a Dict, not a Call");
  EXPECT_ERROR("}K\x01" "a.", "APPEND: the target is a Dict, not a List");
  EXPECT_ERROR("]K\x01K\x02s.", "SETITEM: the target is a List, not a Dict");
  EXPECT_ERROR("}(K\x01u.", "SETITEMS: an odd number of keys and values");
  EXPECT_ERROR("NNR.", "REDUCE: the arguments are a None, not a Tuple");
  EXPECT_ERROR("K\x01K\x02\x93.", "STACK_GLOBAL: the module and name are not Strs");
  EXPECT_ERROR(bytes("cm\nC\n)\x81}b}b."), "BUILD: the object already has a state");
  EXPECT_ERROR(bytes("cm\nC\n)}(K\x01K\x01" "d\x92."), "NEWOBJ_EX: keyword arguments are not supported");
}

TEST(PickleBad, OtherRefusals) {
  EXPECT_ERROR(bytes("\x80\x06N."), "unsupported pickle protocol 6");
  EXPECT_ERROR(bytes("X\x02\x00\x00\x00\xc3(."), "BINUNICODE: the string is not valid UTF-8");
  EXPECT_ERROR(bytes("\x8c\x03\xed\xa0\x80."), "not valid UTF-8");  // a surrogate
  EXPECT_ERROR("Iabc\n.", "INT: 'abc' is not a decimal integer");
  EXPECT_ERROR("Fx\n.", "FLOAT: 'x' is not a number");
  EXPECT_ERROR("Sabc\n.", "STRING: the argument is not quoted");
  EXPECT_ERROR("cmodule", "GLOBAL: no newline");
  EXPECT_ERROR(bytes("\x97."), "NEXT_BUFFER: out-of-band buffers are not supported");
  EXPECT_ERROR(bytes("\x82\x01."), "extension registry is not supported");
  EXPECT_ERROR("V\\u12\n.", "UNICODE: a truncated \\u escape");
}

TEST(Pickle, OlderOpcodes) {
  // STRING with escapes, BINSTRING, SHORT_BINSTRING, PERSID, INST, OBJ, POP, POP_MARK, DUP, DICT.
  auto r = unpickle(bytes("(S'a\\'b\\x41\\n'\nT\x02\x00\x00\x00hiU\x02yoPid7\n(K\x01imod\nCls\n(cmod\nK\no"
                          "K\x09" "0(K\x01K\x02" "1K\x03" "2(K\x01K\x02" "dl."),
                    "t");
  ASSERT_EQ(r->kind, Kind::List);
  ASSERT_EQ(r->items.size(), 9u) << describe(*r);
  EXPECT_EQ(r->items[0]->str, "a'bA\n");
  EXPECT_EQ(r->items[1]->str, "hi");
  EXPECT_EQ(r->items[2]->str, "yo");
  EXPECT_EQ(r->items[3]->kind, Kind::PersistentId);
  EXPECT_EQ(r->items[3]->items[0]->str, "id7");
  EXPECT_EQ(describe(*r->items[4]), "Call(mod.Cls, (1,))");
  EXPECT_EQ(describe(*r->items[5]), "Call(mod.K, ())");
  EXPECT_EQ(r->items[6]->i, 3);
  EXPECT_EQ(r->items[7].get(), r->items[6].get());
  EXPECT_EQ(describe(*r->items[8]), "{1: 2}");
}

TEST(PickleBad, RandomByteChanges) {
  std::mt19937 rng(11);
  for (auto* p : {&kProto2, &kProto0, &kProto4, &kTensor, &kObject4}) {
    for (int round = 0; round < 3000; ++round) {
      auto q = *p;
      int changes = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < changes; ++k) q[rng() % q.size()] = static_cast<char>(rng());
      try {
        auto r = unpickle(q, "t");
        describe(*r, 5);
        dismantle(std::move(r));
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace
