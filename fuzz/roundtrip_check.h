// The property the fuzz targets check, shared with the gtest that replays the corpus (so CI runs
// every corpus file without clang): any input either fails to parse with a ParseError, or it
// parses, verifies clean, is written, and the written text reads back as an equal document whose
// own text is byte-identical; the same holds through the other text form.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/ir/equal.h"
#include "amanda/ir/verify.h"
#include "amanda/text/document.h"

namespace amanda::fuzz {

inline std::string same_document(const text::Document& a, const text::Document& b) {
  if (a.kind != b.kind) return "document kinds differ";
  if (a.kind == text::Document::Kind::Edge) {
    const auto &x = a.edge, &y = b.edge;
    if (x.src_op != y.src_op || x.src_port != y.src_port || x.dst_op != y.dst_op || x.dst_port != y.dst_port)
      return "edge endpoints differ";
    if (x.attrs.size() != y.attrs.size()) return "edge attribute counts differ";
    for (size_t i = 0; i < x.attrs.size(); ++i)
      if (x.attrs[i].first != y.attrs[i].first || x.attrs[i].second != y.attrs[i].second)
        return "edge attribute '" + x.attrs[i].first + "' differs";
    return "";
  }
  return ir::first_difference(a.graph, b.graph);
}

// Writes `doc` as `f`, reads it back, and checks it. Returns "" when fine; `written` receives the
// text (empty if the document legitimately cannot be written: it nests too deeply for `f`).
inline std::string write_and_reread(const text::Document& doc, text::Format f, std::string& written,
                                    std::unique_ptr<text::Document>* out = nullptr) {
  written.clear();
  try {
    written = text::to_text(doc, f);
  } catch (const Error& e) {
    // The JSON form wraps tensors and graphs in one more object than YAML tags do, so a document
    // at the very nesting limit may not fit the other form; that is a clean refusal.
    if (std::string_view(e.what()).find("nests deeper than") != std::string_view::npos) return "";
    return std::string("writing ") + std::string(text::format_name(f)) + " failed: " + e.what();
  }
  Diagnostics diags;
  std::unique_ptr<text::Document> again;
  try {
    again = std::make_unique<text::Document>(text::parse(written, f, "written", diags));
  } catch (const ParseError& e) {
    return std::string("the written ") + std::string(text::format_name(f)) + " does not read back: " + e.what() +
           "\n--- written text:\n" + written;
  }
  if (diags.warning_count()) return "the written text reads back with warnings: " + diags.str() + "\n--- text:\n" + written;
  if (std::string d = same_document(doc, *again); !d.empty())
    return std::string("the ") + std::string(text::format_name(f)) + " round trip changed the document: " + d +
           "\n--- written text:\n" + written;
  std::string second;
  try {
    second = text::to_text(*again, f);
  } catch (const Error& e) {
    return std::string("writing the re-read document failed: ") + e.what();
  }
  if (second != written)
    return "the second " + std::string(text::format_name(f)) + " trip is not byte-identical\n--- first:\n" + written +
           "\n--- second:\n" + second;
  if (out) *out = std::move(again);
  return "";
}

inline std::string roundtrip_problem(std::string_view input, text::Format format) {
  Diagnostics diags;
  std::unique_ptr<text::Document> doc;
  text::ReadOptions opt;
  opt.limits.max_alias_events = 100'000;  // keeps each input fast; the limit itself is tested elsewhere
  try {
    doc = std::make_unique<text::Document>(text::parse(input, format, "input", diags, opt));
  } catch (const ParseError&) {
    return "";  // refused with a position: fine
  }
  if (doc->kind != text::Document::Kind::Edge) {
    // A cycle is a fault of the graph described, not of the text: the text forms carry it (so a
    // user can read and fix it) and the verifier refuses it before any tool acts on it. Every
    // other verifier problem means the reader let a malformed structure through.
    Diagnostics problems;
    ir::verify(doc->graph, problems);
    for (const Diagnostic& d : problems.items())
      if (d.severity == Severity::Error && d.message.find("form a cycle") == std::string::npos)
        return "parsed, but the verifier found problems:\n" + problems.str();
  }
  std::string text;
  std::unique_ptr<text::Document> same;
  if (std::string p = write_and_reread(*doc, format, text, &same); !p.empty()) return p;
  // Through the other form and back.
  text::Format other = format == text::Format::Yaml ? text::Format::Json : text::Format::Yaml;
  std::string other_text;
  std::unique_ptr<text::Document> via_other;
  if (std::string p = write_and_reread(*doc, other, other_text, &via_other); !p.empty()) return p;
  if (via_other && !text.empty()) {
    std::string back;
    try {
      back = text::to_text(*via_other, format);
    } catch (const Error& e) {
      return std::string("writing back from the other form failed: ") + e.what();
    }
    if (back != text) return "the text written after a trip through the other form differs\n--- direct:\n" + text + "\n--- via:\n" + back;
  }
  return "";
}

}  // namespace amanda::fuzz
