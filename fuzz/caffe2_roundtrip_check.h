// The property the Caffe2 fuzz target checks, shared with the gtest that replays its corpus
// (tests/caffe2/fuzz_corpus_test.cpp). The first byte picks the form: 'b' a binary predict net,
// 't' its text form, 'i' a binary predict net and init net: a 4-byte little-endian length, the
// predict net of that length, then the init net. Any input is either refused with an
// amanda::ParseError/Error naming the file, or it imports, verifies, exports, re-imports to an
// equal graph and exports again to the same bytes; and the wire readers and writers give what
// protobuf gives (the same graph, the same bytes).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "netdef.h"

namespace amanda::fuzz {

inline std::string caffe2_roundtrip_problem(std::string_view data) {
  using namespace caffe2_frontend;
  if (data.empty()) return "";
  char mode = data[0];
  std::string_view body = data.substr(1);
  NetBytes predict{body, mode == 't'};
  std::optional<NetBytes> init;
  if (mode == 'i') {
    if (body.size() < 4) return "";
    uint32_t n = uint32_t(uint8_t(body[0])) | uint32_t(uint8_t(body[1])) << 8 | uint32_t(uint8_t(body[2])) << 16 |
                 uint32_t(uint8_t(body[3])) << 24;
    if (n > body.size() - 4) return "";
    predict = {body.substr(4, n), false};
    init = NetBytes{body.substr(4 + n), false};
  } else if (mode != 'b' && mode != 't') {
    return "";
  }
  ImportOptions fast, slow;
  fast.file_name = slow.file_name = "predict_net";
  fast.init_file_name = slow.init_file_name = "init_net";
  slow.wire = false;
  std::unique_ptr<text::Document> doc, ref;
  std::string refused, ref_refused;
  try {
    doc = std::make_unique<text::Document>(import_net(predict, init, fast));
  } catch (const Error& e) {
    refused = e.what();
  } catch (const ParseError& e) {
    refused = e.what();
  }
  try {
    ref = std::make_unique<text::Document>(import_net(predict, init, slow));
  } catch (const Error& e) {
    ref_refused = e.what();
  } catch (const ParseError& e) {
    ref_refused = e.what();
  }
  if (!doc != !ref) return "the wire reader and protobuf disagree on whether the net reads: " + refused + " / " + ref_refused;
  if (!doc) {
    if (refused.find("predict_net") == std::string::npos && refused.find("init_net") == std::string::npos)
      return "a refusal that does not name the file: " + refused;
    return "";
  }
  if (std::string d = ir::first_difference(doc->graph, ref->graph); !d.empty()) return "the wire reader's graph differs from protobuf's: " + d;
  Diagnostics problems;
  ir::verify(doc->graph, problems);
  ExportedNet first, slow_out, second;
  try {
    first = export_net(*doc, false);
    slow_out = export_net(*doc, false, /*wire=*/false);
  } catch (const std::exception& e) {
    return std::string("an imported net does not export: ") + e.what();
  }
  if (first.predict != slow_out.predict || first.init != slow_out.init) return "the wire writer's bytes differ from protobuf's";
  std::unique_ptr<text::Document> again;
  try {
    std::optional<NetBytes> init2;
    if (first.init) init2 = NetBytes{*first.init, false};
    again = std::make_unique<text::Document>(import_net({first.predict, false}, init2, fast));
    second = export_net(*again, false);
  } catch (const std::exception& e) {
    return std::string("the exported net does not import and export: ") + e.what();
  }
  if (second.predict != first.predict || second.init != first.init) return "export, import, export gave different bytes";
  return "";
}

}  // namespace amanda::fuzz
