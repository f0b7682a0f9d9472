// Tensors (inline data lists, base64, side files) and scalars that are easy to get wrong: float
// edge cases, and strings that only survive when quoted.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "text_test_util.h"

namespace amanda::text {
namespace {

using namespace testing;

const ir::Value& attr(const Document& doc, std::string_view key) {
  const ir::Value* v = doc.graph.attr(doc.graph.root(), doc.graph.symbols().find(key));
  if (!v) throw std::runtime_error("no attribute " + std::string(key));
  return *v;
}

const ir::Tensor& tensor(const Document& doc, std::string_view key) { return attr(doc, key).as_tensor(); }

template <class T>
std::vector<T> elements(const ir::Tensor& t) {
  std::vector<T> out(t.size / sizeof(T));
  std::memcpy(out.data(), t.data, out.size() * sizeof(T));
  return out;
}

Document op_with(std::initializer_list<std::pair<std::string, ir::Value>> attrs) {
  Document doc(Document::Kind::Op);
  doc.graph.set_name(doc.graph.root(), doc.graph.sym("t"));
  for (const auto& [k, v] : attrs) doc.graph.set_attr(doc.graph.root(), doc.graph.sym(k), v);
  return doc;
}

Document reread(const Document& doc, Format f) { return parse_as(to_text(doc, f), f); }

// ------------------------------------------------------------------------- inline data lists

TEST(TensorText, DataListsOfEveryListableType) {
  Document doc = parse_yaml(R"(op:
  attrs:
    b: !tensor {dtype: bool, shape: [3], data: [true, false, 1]}
    i8: !tensor {dtype: int8, shape: [2], data: [-128, 127]}
    i16: !tensor {dtype: int16, shape: [2], data: [-32768, 32767]}
    i32: !tensor {dtype: int32, shape: [2], data: [-2147483648, 2147483647]}
    i64: !tensor {dtype: int64, shape: [2], data: [-9223372036854775808, 9223372036854775807]}
    u8: !tensor {dtype: uint8, shape: [2], data: [0, 255]}
    u16: !tensor {dtype: uint16, shape: [2], data: [0, 65535]}
    u32: !tensor {dtype: uint32, shape: [2], data: [0, 4294967295]}
    u64: !tensor {dtype: uint64, shape: [2], data: [0, 9223372036854775807]}
    f32: !tensor {dtype: float32, shape: [2, 2], data: [1, 2.5, -0.0, 3.4028234663852886e+38]}
    f64: !tensor {dtype: float64, shape: [2], data: [0.1, 2]}
    whole: !tensor {dtype: int32, shape: [1], data: [3.0]}
)");
  EXPECT_EQ(elements<uint8_t>(tensor(doc, "b")), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(elements<int8_t>(tensor(doc, "i8")), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(elements<int16_t>(tensor(doc, "i16")), (std::vector<int16_t>{-32768, 32767}));
  EXPECT_EQ(elements<int32_t>(tensor(doc, "i32")), (std::vector<int32_t>{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(elements<int64_t>(tensor(doc, "i64")), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  EXPECT_EQ(elements<uint8_t>(tensor(doc, "u8")), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(elements<uint16_t>(tensor(doc, "u16")), (std::vector<uint16_t>{0, 65535}));
  EXPECT_EQ(elements<uint32_t>(tensor(doc, "u32")), (std::vector<uint32_t>{0, UINT32_MAX}));
  EXPECT_EQ(elements<uint64_t>(tensor(doc, "u64")), (std::vector<uint64_t>{0, INT64_MAX}));
  auto f = elements<float>(tensor(doc, "f32"));
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 2.5f);
  EXPECT_TRUE(std::signbit(f[2]));
  EXPECT_EQ(f[3], std::numeric_limits<float>::max());
  EXPECT_EQ(elements<double>(tensor(doc, "f64")), (std::vector<double>{0.1, 2.0}));
  EXPECT_EQ(elements<int32_t>(tensor(doc, "whole")), (std::vector<int32_t>{3}));
  EXPECT_EQ(tensor(doc, "f32").shape, (std::vector<int64_t>{2, 2}));
  for (Format fm : {Format::Yaml, Format::Json}) EXPECT_TRUE(same_document(doc, reread(doc, fm))) << format_name(fm);
}

TEST(TensorText, ValuesTheTypeCannotHoldAreErrors) {
  struct Case {
    const char* yaml;
    const char* message;
  } cases[] = {
      {"op: {attrs: {t: !tensor {dtype: int8, shape: [1], data: [128]}}}", "element 0 (128) does not fit int8"},
      {"op: {attrs: {t: !tensor {dtype: uint32, shape: [2], data: [1, -1]}}}", "element 1 (-1) does not fit uint32"},
      {"op: {attrs: {t: !tensor {dtype: int32, shape: [1], data: [1.5]}}}", "element 0 (1.5) is not an integer"},
      {"op: {attrs: {t: !tensor {dtype: int64, shape: [1], data: [1e300]}}}", "is not an integer"},
      {"op: {attrs: {t: !tensor {dtype: int64, shape: [1], data: [.nan]}}}", "is not an integer"},
      {"op: {attrs: {t: !tensor {dtype: bool, shape: [1], data: [2]}}}", "(2) does not fit bool"},
      {"op: {attrs: {t: !tensor {dtype: float32, shape: [1], data: [abc]}}}", "element 0 is not a number"},
      {"op: {attrs: {t: !tensor {dtype: float16, shape: [1], data: [1]}}}", "not supported for float16"},
      {"op: {attrs: {t: !tensor {dtype: quux, shape: [1], data: [1]}}}", "unknown tensor element type 'quux'"},
      {"op: {attrs: {t: !tensor {dtype: float32, shape: [-1], data: []}}}", "non-negative integers"},
      {"op: {attrs: {t: !tensor {dtype: float64, shape: [2305843009213693952, 2], base64: AA==}}}", "too large"},
      {"op: {attrs: {t: !tensor {dtype: float32, shape: [4294967296, 4294967296, 4294967296], data: []}}}",
       "too large"},
      {"op: {attrs: {t: !tensor {dtype: float32, shape: [1], data: [1], base64: AAAAAA==}}}", "exactly one of"},
      {"op: {attrs: {t: !tensor {shape: [1], data: [1]}}}", "tensor has no dtype"},
      {"op: {attrs: {t: !tensor {dtype: float32, data: [1]}}}", "tensor has no shape"},
      {"op: {attrs: {t: !tensor {dtype: float32, shape: [1], base64: \"!!\"}}}", "not valid base64"},
      {"op: {attrs: {t: !tensor {dtype: float32, shape: [1], data: [1], extra: 1}}}", "unknown key 'extra' in a tensor"},
      {"op: {attrs: {t: !tensor {dtype: string, shape: [1], data: [1]}}}", "must be strings"},
  };
  for (const auto& c : cases) {
    ParseError e = parse_error(c.yaml);
    EXPECT_NE(e.message().find(c.message), std::string::npos) << c.yaml << "\n  gave: " << e.what();
    EXPECT_EQ(e.loc().line, 1u) << c.yaml;
    EXPECT_GT(e.loc().column, 1u) << c.yaml;
  }
}

TEST(TensorText, BytesThatDoNotMatchTheShape) {
  // Three ways of giving the bytes, each with the wrong amount.
  ParseError list = parse_error("op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [2, 2], data: [1, 2, 3]}\n");
  EXPECT_EQ(list.loc().str(), "in.yaml:3:54");
  EXPECT_NE(list.message().find("float32[2, 2] has 4 elements but data has 3"), std::string::npos) << list.what();

  ParseError b64 = parse_error("op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [2], base64: AAAAAA==}\n");
  EXPECT_EQ(b64.loc().str(), "in.yaml:3:53");
  EXPECT_NE(b64.message().find("needs 8 bytes but its data has 4"), std::string::npos) << b64.what();

  TempDir dir;
  spit(dir / "side.bin", std::string(12, '\1'));
  ReadOptions opt;
  opt.base_dir = dir.path().string();
  ParseError len = parse_error(
      "op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [2], file: side.bin, offset: 0, length: 4}\n", Format::Yaml, opt);
  EXPECT_EQ(len.loc().str(), "in.yaml:3:8");
  EXPECT_NE(len.message().find("needs 8 bytes but its length is 4"), std::string::npos) << len.what();
  ParseError past = parse_error(
      "op:\n  attrs:\n    w: !tensor {dtype: float32, shape: [2], file: side.bin, offset: 8, length: 8}\n", Format::Yaml, opt);
  EXPECT_NE(past.message().find("bytes [8, 16) lie outside side file 'side.bin' (12 bytes)"), std::string::npos)
      << past.what();
  ParseError huge = parse_error("op:\n  attrs:\n    w: !tensor {dtype: uint8, shape: [8], file: side.bin, offset: "
                                "18446744073709551615, length: 8}\n",
                                Format::Yaml, opt);
  EXPECT_NE(huge.message().find("out of the 64-bit range"), std::string::npos) << huge.what();
  ParseError wrap = parse_error("op:\n  attrs:\n    w: !tensor {dtype: uint8, shape: [8], file: side.bin, offset: "
                                "9223372036854775807, length: 8}\n",
                                Format::Yaml, opt);
  EXPECT_NE(wrap.message().find("lie outside side file"), std::string::npos) << wrap.what();
}

TEST(TensorText, SideFilesMustStayInTheDocumentsFolder) {
  TempDir dir;
  fs::create_directory(dir / "sub");
  spit(dir / "sub" / "in.bin", std::string(8, '\0'));
  fs::create_symlink(dir / "sub" / "in.bin", dir / "link.bin");
  ReadOptions opt;
  opt.base_dir = dir.path().string();
  auto doc_with = [](const std::string& file) {
    return "op: {attrs: {w: !tensor {dtype: float32, shape: [2], file: \"" + file + "\", offset: 0, length: 8}}}\n";
  };
  EXPECT_NO_THROW(parse_yaml(doc_with("sub/in.bin"), nullptr, opt));
  EXPECT_NE(parse_error(doc_with("../x.bin"), Format::Yaml, opt).message().find("contains '..'"), std::string::npos);
  EXPECT_NE(parse_error(doc_with("/etc/passwd"), Format::Yaml, opt).message().find("relative path"), std::string::npos);
  EXPECT_NE(parse_error(doc_with("link.bin"), Format::Yaml, opt).message().find("symbolic link"), std::string::npos);
  EXPECT_NE(parse_error(doc_with("missing.bin"), Format::Yaml, opt).message().find("side file 'missing.bin' cannot be read"),
            std::string::npos);
  // The same policy as ONNX external data (support/path_policy.h): a symbolic link in any
  // component, not only the last, and anything but a regular file.
  fs::create_directory_symlink(dir / "sub", dir / "linkdir");
  EXPECT_NE(parse_error(doc_with("linkdir/in.bin"), Format::Yaml, opt).message().find("goes through a symbolic link ('linkdir')"),
            std::string::npos);
  EXPECT_NE(parse_error(doc_with("sub"), Format::Yaml, opt).message().find("a folder, not a regular file"), std::string::npos);
  // Parsing a string with no folder refuses side files.
  EXPECT_NE(parse_error(doc_with("sub/in.bin")).message().find("no folder is known"), std::string::npos);
}

// ------------------------------------------------------------------------- base64

TEST(TensorText, Base64ForTypesWithoutDataLists) {
  std::string bytes = {'\x00', '\x3c', '\x00', '\xc0', '\xff', '\x7f'};  // float16: 1, -2, nan
  Document doc = op_with({{"h", ir::Value(ir::Tensor::from_bytes(ir::DType::Float16, {3}, bytes))},
                          {"u", ir::Value(ir::Tensor::from_bytes(ir::DType::UInt64, {1}, std::string(8, '\xff')))}});
  std::string y = to_text(doc, Format::Yaml);
  EXPECT_NE(y.find("h: !tensor {dtype: float16, shape: [3], base64: ADwAwP9/}"), std::string::npos) << y;
  EXPECT_NE(y.find("u: !tensor {dtype: uint64, shape: [1], base64: //////////8=}"), std::string::npos) << y;
  for (Format f : {Format::Yaml, Format::Json}) {
    Document back = reread(doc, f);
    EXPECT_EQ(tensor(back, "h").bytes(), bytes);
    EXPECT_EQ(tensor(back, "u").bytes(), std::string(8, '\xff'));
  }
}

// ------------------------------------------------------------------------- side files

TEST(TensorText, LargeTensorsGoToASideFileThatTheReaderBorrows) {
  TempDir dir;
  std::string big(4000, '\0'), small(8, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + 1);
  for (size_t i = 0; i < small.size(); ++i) small[i] = static_cast<char>(0x40 + i);
  Document doc = op_with({{"big", ir::Value(ir::Tensor::from_bytes(ir::DType::Float32, {10, 100}, big))},
                          {"odd", ir::Value(ir::Tensor::from_bytes(ir::DType::UInt8, {33}, big.substr(0, 33)))},
                          {"small", ir::Value(ir::Tensor::from_bytes(ir::DType::UInt8, {8}, small))}});
  for (Format f : {Format::Yaml, Format::Json}) {
    std::string name = std::string("out.") + std::string(format_name(f));
    fs::path out = dir / name;
    WriteOptions opt;
    opt.inline_limit = 16;
    std::string side = write_file(doc, out.string(), f, opt);
    EXPECT_EQ(side, out.string() + ".data");
    ASSERT_TRUE(fs::exists(side));
    // Offsets are 64-byte aligned: 4000 bytes at 0, 33 bytes at 4032.
    EXPECT_EQ(fs::file_size(side), 4032u + 33u);
    std::string text = slurp(out);
    EXPECT_NE(text.find(name + ".data"), std::string::npos) << text;
    EXPECT_NE(text.find("4032"), std::string::npos) << text;
    EXPECT_LT(text.size(), 1000u) << "the bytes must not also be inline";

    Diagnostics diags;
    Document back = read_file(out.string(), diags);
    const ir::Tensor& t = tensor(back, "big");
    EXPECT_TRUE(t.borrowed_from_file);
    ASSERT_TRUE(t.owner);
    EXPECT_GE(t.data, t.owner->data());
    EXPECT_LE(t.data + t.size, t.owner->data() + t.owner->size());
    EXPECT_EQ(t.owner->size(), fs::file_size(side)) << "the tensor borrows the mapped side file";
    EXPECT_EQ(tensor(back, "odd").owner, t.owner) << "one mapping for the whole side file";
    EXPECT_FALSE(tensor(back, "small").borrowed_from_file);
    EXPECT_TRUE(same_document(doc, back));

    // Written again without a side file, everything is inline and equal.
    Document inline_back = reread(back, f);
    EXPECT_TRUE(same_document(doc, inline_back));
    EXPECT_FALSE(tensor(inline_back, "big").borrowed_from_file);
  }
  // A document with no large tensor writes no side file.
  Document plain = op_with({{"small", ir::Value(ir::Tensor::from_bytes(ir::DType::UInt8, {8}, small))}});
  EXPECT_EQ(write_file(plain, (dir / "plain.yaml").string(), Format::Yaml), "");
  EXPECT_FALSE(fs::exists(dir / "plain.yaml.data"));
}

// Rewriting a document over itself while its tensors are borrowed from its own side file.
TEST(TensorText, RewriteInPlaceKeepsBorrowedBytesValid) {
  TempDir dir;
  std::string big(1000, 'x');
  Document doc = op_with({{"w", ir::Value(ir::Tensor::from_bytes(ir::DType::UInt8, {1000}, big))}});
  fs::path out = dir / "m.yaml";
  WriteOptions opt;
  opt.inline_limit = 10;
  write_file(doc, out.string(), Format::Yaml, opt);
  Diagnostics diags;
  Document back = read_file(out.string(), diags);
  write_file(back, out.string(), Format::Yaml, opt);
  EXPECT_EQ(tensor(back, "w").bytes(), big);
  Document again = read_file(out.string(), diags);
  EXPECT_TRUE(same_document(doc, again));
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"m.yaml", "m.yaml.data"}));
}

// ------------------------------------------------------------------------- floats

uint64_t bits(double d) { return std::bit_cast<uint64_t>(d); }

TEST(FloatText, EdgeCasesRoundTripBitForBit) {
  const double values[] = {0.0,
                           -0.0,
                           1e300,
                           -1e300,
                           1e-300,
                           5e-324,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           0.1,
                           1.0 / 3.0,
                           123456789012345678.0,
                           1.0,
                           -2.5,
                           9007199254740993.0};
  ir::Value::List list;
  for (double d : values) list.emplace_back(d);
  Document doc = op_with({{"f", ir::Value(list)}, {"nan", ir::Value(std::nan(""))}, {"neg_zero", ir::Value(-0.0)}});
  for (Format f : {Format::Yaml, Format::Json}) {
    Document back = reread(doc, f);
    const auto& got = attr(back, "f").as_list();
    ASSERT_EQ(got.size(), std::size(values));
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(got[i].is_float()) << i << " became " << ir::kind_name(got[i].kind());
      EXPECT_EQ(bits(got[i].as_float()), bits(values[i])) << format_name(f) << ": " << values[i];
    }
    EXPECT_TRUE(std::isnan(attr(back, "nan").as_float()));
    // Value::operator== takes -0.0 for 0.0, so the sign is checked on the bits.
    EXPECT_EQ(bits(attr(back, "neg_zero").as_float()), bits(-0.0)) << format_name(f);
  }
  // A whole number stays a float (1.0, not 1), in both forms.
  EXPECT_NE(to_text(doc, Format::Yaml).find("neg_zero: -0.0"), std::string::npos);
  EXPECT_NE(to_text(doc, Format::Json).find("\"neg_zero\": -0.0"), std::string::npos);
}

TEST(FloatText, NonFiniteTensorsKeepTheirExactBits) {
  const double d[] = {std::nan(""), -std::nan(""), std::numeric_limits<double>::infinity(), -0.0, 1e300};
  std::string bytes(reinterpret_cast<const char*>(d), sizeof d);
  uint64_t payload_nan = 0x7ff0000000000abcull;  // a NaN with a payload
  bytes.append(reinterpret_cast<const char*>(&payload_nan), 8);
  Document doc = op_with({{"t", ir::Value(ir::Tensor::from_bytes(ir::DType::Float64, {6}, bytes))}});
  for (Format f : {Format::Yaml, Format::Json}) EXPECT_EQ(tensor(reread(doc, f), "t").bytes(), bytes) << format_name(f);
}

TEST(FloatText, ReadingFloatSpellings) {
  Document doc = parse_yaml(
      "op: {attrs: {a: [.inf, -.Inf, +.INF, .NaN, 1e3, 1E-3, +2.5, .5, 1., 0x10, 0o10, 1e400, -1e400, 1e-400]}}\n");
  const auto& l = attr(doc, "a").as_list();
  EXPECT_EQ(l[0].as_float(), HUGE_VAL);
  EXPECT_EQ(l[1].as_float(), -HUGE_VAL);
  EXPECT_EQ(l[2].as_float(), HUGE_VAL);
  EXPECT_TRUE(std::isnan(l[3].as_float()));
  EXPECT_EQ(l[4].as_float(), 1000.0);
  EXPECT_EQ(l[5].as_float(), 0.001);
  EXPECT_EQ(l[6].as_float(), 2.5);
  EXPECT_EQ(l[7].as_float(), 0.5);
  EXPECT_EQ(l[8].as_float(), 1.0);
  EXPECT_EQ(l[9], ir::Value(16));
  EXPECT_EQ(l[10], ir::Value(8));
  EXPECT_EQ(l[11].as_float(), HUGE_VAL);
  EXPECT_EQ(l[12].as_float(), -HUGE_VAL);
  EXPECT_EQ(l[13].as_float(), 0.0);
  Document json = parse_json(R"({"op": {"attrs": {"a": [NaN, Infinity, -Infinity, 1e3, -0.0, 5]}}})");
  const auto& j = attr(json, "a").as_list();
  EXPECT_TRUE(std::isnan(j[0].as_float()));
  EXPECT_EQ(j[1].as_float(), HUGE_VAL);
  EXPECT_EQ(j[2].as_float(), -HUGE_VAL);
  EXPECT_EQ(j[3].as_float(), 1000.0);
  EXPECT_TRUE(std::signbit(j[4].as_float()));
  EXPECT_EQ(j[5], ir::Value(5));
}

TEST(FloatText, IntegersOutOfRangeAreErrors) {
  ParseError y = parse_error("op: {attrs: {a: 9223372036854775808}}\n");
  EXPECT_NE(y.message().find("out of the 64-bit range"), std::string::npos) << y.what();
  ParseError j = parse_error(R"({"op": {"attrs": {"a": -9223372036854775809}}})", Format::Json);
  EXPECT_NE(j.message().find("out of the 64-bit range"), std::string::npos) << j.what();
}

// ------------------------------------------------------------------------- strings

// Strings that a careless writer would emit plain and a reader would then take for something
// else (a number, a bool, null, a mapping, a comment, an alias), or that need escapes.
const char* const kTrickyStrings[] = {
    "10", "true", "false", "null", "~", "", "a: b", "a:b", "#x", "a #b", "y", "n", "yes", "No", "on", "OFF", "- x", "-",
    "-1", "1.5", "1e3", ".inf", ".nan", "0x1F", "0o17", "1_000", "12:30", "=", "<<", "? q", "!tag", "&anchor", "*alias",
    "%percent", "@at", "`tick", "{x}", "[y]", "a, b", "'single'", "\"double\"", "back\\slash", " leading", "trailing ",
    "tab\there", "new\nline", "cr\rhere", "nul\x01\x1f\x7f", "ünïcödé", "→ arrow", "日本語", "emoji 🙂",
    "line\xe2\x80\xa8sep", "nel\xc2\x85", "\xef\xbb\xbf" "bom", "c1\xc2\x80", "\xef\xbf\xbe", "^control", "plain words",
    "a/b/c", "aten::matmul", "Float(1, 784)", "input.1",
};

TEST(StringText, TrickyStringsRoundTripEverywhere) {
  // As attribute values, attribute keys, op and port names, namespaces and edge endpoints.
  Document doc(Document::Kind::Graph);
  ir::Graph& g = doc.graph;
  ir::Value::List list;
  ir::PortId prev;
  for (const char* s : kTrickyStrings) {
    list.emplace_back(s);
    g.set_attr(g.root(), g.sym(s), ir::Value(s));
    if (std::string_view(s).empty() || std::string_view(s) == "^control") continue;
    ir::OpId op = g.create_op(g.root(), g.sym("T"), g.sym(s));
    ir::PortId in = g.add_input(op, g.sym(s));
    ir::PortId out = g.add_output(op, g.sym(s));
    g.set_attr(in, g.sym(s), ir::Value(s));
    if (prev) g.connect(prev, in);
    prev = out;
  }
  g.set_attr(g.root(), g.sym("list"), ir::Value(list));
  g.set_graph_namespace(g.root(), g.sym("ns: \"x\" #1"));
  for (Format f : {Format::Yaml, Format::Json}) {
    std::string text = to_text(doc, f);
    Document back = parse_as(text, f);
    EXPECT_TRUE(same_document(doc, back)) << format_name(f) << ":\n" << text;
    EXPECT_EQ(to_text(back, f), text);
    const auto& got = attr(back, "list").as_list();
    ASSERT_EQ(got.size(), std::size(kTrickyStrings));
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_TRUE(got[k].is_string()) << format_name(f) << ": '" << kTrickyStrings[k] << "' became "
                                      << ir::kind_name(got[k].kind());
      EXPECT_EQ(got[k].as_string(), kTrickyStrings[k]);
    }
  }
}

// Found by json_fuzz: YAML allows at most 1024 characters in an implicit key, so longer keys are
// written as explicit keys ("? KEY" / ": VALUE"), in block and in flow style.
TEST(StringText, LongKeysUseTheExplicitForm) {
  std::string long_key(3000, 'k'), long_quoted = "a: " + std::string(1500, '\n');
  ir::Value::Map inner;
  inner.push_back({long_key, ir::Value(1)});
  inner.push_back({long_quoted, ir::Value(ir::Value::Map{{"x", ir::Value(ir::Value::List{1, 2})}})});
  ir::Value::List flow_list{ir::Value(inner)};  // a list of maps is written in block style
  Document doc = op_with({{long_key, ir::Value("v")},
                          {"nested", ir::Value(inner)},
                          {"list", ir::Value(flow_list)},
                          {"t", ir::Value(ir::Tensor::from_bytes(ir::DType::UInt8, {1}, "a"))}});
  doc.graph.set_attr(doc.graph.root(), doc.graph.sym(long_quoted), ir::Value(ir::Value::List{}));
  std::string y = to_text(doc, Format::Yaml);
  EXPECT_NE(y.find("\n    ? \"" + long_key + "\"\n    : v\n"), std::string::npos);
  for (Format f : {Format::Yaml, Format::Json}) {
    Document back = reread(doc, f);
    EXPECT_TRUE(same_document(doc, back)) << format_name(f);
    EXPECT_EQ(to_text(back, f), to_text(doc, f));
  }
  // Read back from the explicit form in a flow mapping too: `{? KEY : VALUE}`.
  Document e = parse_yaml("edge: {output_port: {op: a, port: b}, input_port: {op: c, port: d}, attrs: {? " + long_key +
                          " : 1}}\n");
  EXPECT_EQ(e.edge.attrs.size(), 1u);
  EXPECT_TRUE(same_document(e, parse_yaml(to_text(e, Format::Yaml))));
  Document flow = parse_yaml("op: {attrs: {m: [{? " + long_key + " : 1}]}}\n");
  EXPECT_EQ(flow.graph.attrs(flow.graph.root()).size(), 1u);
}

TEST(StringText, QuotedOnlyWhenNeeded) {
  Document doc = op_with({{"a", ir::Value("plain")},
                          {"b", ir::Value("10")},
                          {"c", ir::Value("true")},
                          {"d", ir::Value("y")},
                          {"e", ir::Value("a: b")},
                          {"f", ir::Value("new\nline")},
                          {"g", ir::Value("dense/MatMul")},
                          {"h", ir::Value("caf\xc3\xa9")}});
  EXPECT_EQ(to_text(doc, Format::Yaml),
            "op:\n  name: t\n  attrs:\n    a: plain\n    b: \"10\"\n    c: \"true\"\n    d: \"y\"\n    e: \"a: b\"\n"
            "    f: \"new\\nline\"\n    g: dense/MatMul\n    h: \"caf\xc3\xa9\"\n");
}

TEST(StringText, TextThatIsNotUtf8IsRefusedNotWrittenUnreadable) {
  Document doc = op_with({{"bad", ir::Value(std::string("ok\xff"))}});
  for (Format f : {Format::Yaml, Format::Json}) {
    try {
      to_text(doc, f);
      ADD_FAILURE() << "expected amanda::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not valid UTF-8 (byte 0xff at offset 2)"), std::string::npos) << e.what();
    }
  }
  TempDir dir;
  EXPECT_THROW(write_file(doc, (dir / "x.yaml").string(), Format::Yaml), Error);
  EXPECT_TRUE(dir.files().empty()) << "a failed write leaves nothing behind";
  // Overlong forms and encoded surrogates are not UTF-8 either.
  for (std::string s : {std::string("\xc0\xaf"), std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"),
                        std::string("\xe2\x82")}) {
    Document d = op_with({{"bad", ir::Value(s)}});
    EXPECT_THROW(to_text(d, Format::Yaml), Error);
  }
}

TEST(StringText, YamlScalarStylesAndTags) {
  Document doc = parse_yaml(R"(op:
  attrs:
    single: 'it''s'
    folded: >
      a
      b
    literal: |
      x
      y
    tagged_str: !!str 10
    tagged_int: !!int "7"
    tagged_float: !!float "1.5"
    tagged_bool: !!bool "true"
    tagged_null: !!null ""
)");
  EXPECT_EQ(attr(doc, "single"), ir::Value("it's"));
  EXPECT_EQ(attr(doc, "folded"), ir::Value("a b\n"));
  EXPECT_EQ(attr(doc, "literal"), ir::Value("x\ny\n"));
  EXPECT_EQ(attr(doc, "tagged_str"), ir::Value("10"));
  EXPECT_EQ(attr(doc, "tagged_int"), ir::Value(7));
  EXPECT_EQ(attr(doc, "tagged_float"), ir::Value(1.5));
  EXPECT_EQ(attr(doc, "tagged_bool"), ir::Value(true));
  EXPECT_TRUE(attr(doc, "tagged_null").is_null());
  EXPECT_NE(parse_error("op: {attrs: {a: !!int x}}").message().find("'x' is not a 64-bit integer"), std::string::npos);
  EXPECT_NE(parse_error("op: {attrs: {a: !custom x}}").message().find("unknown tag '!custom'"), std::string::npos);
}

}  // namespace
}  // namespace amanda::text
