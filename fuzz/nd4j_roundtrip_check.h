// The property the nd4j fuzz target checks, shared with the gtest that replays its corpus
// (tests/nd4j/fuzz_corpus_test.cpp): any input is either refused with an amanda::Error (the
// FlatBuffers verifier, a dangling variable id, an op without a name, ...), or it reads, writes
// (or is refused by the writer with an Error: an ordered argument missing, say), reads back
// without error, and writes the same bytes again.
#pragma once

#include <string>
#include <string_view>

#include "amanda/ir/verify.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "frameworks/nd4j/nd4j.h"

namespace amanda::fuzz {

inline std::string nd4j_roundtrip_problem(std::string_view bytes) {
  std::string first;
  try {
    text::Document doc = nd4j::read_flatgraph(make_buffer(std::string(bytes)), "fuzz.fb");
    first = nd4j::write_flatgraph(doc);
  } catch (const Error&) {
    return "";  // refused: fine
  } catch (const ParseError&) {
    return "";
  }
  try {
    text::Document again = nd4j::read_flatgraph(make_buffer(first), "written.fb");
    std::string second = nd4j::write_flatgraph(again);
    if (second != first) return "writing the written file again gives other bytes";
  } catch (const std::exception& e) {
    return std::string("the written file does not read back: ") + e.what();
  }
  return "";
}

}  // namespace amanda::fuzz
