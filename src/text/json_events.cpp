// JSON events from RapidJSON. Debian's RapidJSON 1.1 has no token-by-token pull API, so the SAX
// reader (iterative: no recursion, and in situ: strings are decoded inside one copy of the text,
// with no allocation per string) records compact events first, and next() serves them.
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "amanda/text/events.h"

namespace amanda::text {

namespace {

constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag |
                            rapidjson::kParseNanAndInfFlag | rapidjson::kParseNumbersAsStringsFlag |
                            rapidjson::kParseValidateEncodingFlag;

struct Compact {
  Event::Type type;
  Event::Style style;
  uint32_t len;
  const char* str;
  size_t offset;  // where the token ends, for positions
};

struct Recorder {
  std::vector<Compact>* out;
  rapidjson::InsituStringStream* is;
  const char* base;
  uint32_t depth = 0;
  uint32_t max_depth;
  size_t too_deep_at = SIZE_MAX;
  size_t bad_string_at = SIZE_MAX;

  void add(Event::Type t, Event::Style s, const char* str, size_t n) {
    out->push_back({t, s, static_cast<uint32_t>(n), str, static_cast<size_t>(is->src_ - base)});
  }
  bool Null() { add(Event::Scalar, Event::Null, "null", 4); return true; }
  bool Bool(bool b) { add(Event::Scalar, Event::Bool, b ? "true" : "false", b ? 4 : 5); return true; }
  bool Int(int) { return true; }
  bool Uint(unsigned) { return true; }
  bool Int64(int64_t) { return true; }
  bool Uint64(uint64_t) { return true; }
  bool Double(double) { return true; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    bool is_float = std::memchr(s, '.', n) || std::memchr(s, 'e', n) || std::memchr(s, 'E', n) ||
                    std::memchr(s, 'N', n) || std::memchr(s, 'I', n);
    add(Event::Scalar, is_float ? Event::Float : Event::Int, s, n);
    return true;
  }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    // RapidJSON validates the raw bytes, but decodes an unpaired \u surrogate escape ("\udc00")
    // into the 3-byte form of a surrogate, which is not UTF-8 (nor a character): refused here, as
    // the writer could never write it back.
    for (const char* p = s; (p = static_cast<const char*>(std::memchr(p, 0xED, s + n - p))) && p + 1 < s + n; ++p)
      if (static_cast<unsigned char>(p[1]) >= 0xA0) {
        bad_string_at = static_cast<size_t>(is->src_ - base);
        return false;
      }
    add(Event::Scalar, Event::String, s, n);
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool c) { return String(s, n, c); }
  bool open(Event::Type t) {
    if (++depth > max_depth) {
      too_deep_at = static_cast<size_t>(is->src_ - base);
      return false;  // stop early: deeper input is refused anyway
    }
    add(t, Event::Plain, nullptr, 0);
    return true;
  }
  bool StartObject() { return open(Event::MapStart); }
  bool EndObject(rapidjson::SizeType) { --depth; add(Event::MapEnd, Event::Plain, nullptr, 0); return true; }
  bool StartArray() { return open(Event::SeqStart); }
  bool EndArray(rapidjson::SizeType) { --depth; add(Event::SeqEnd, Event::Plain, nullptr, 0); return true; }
};

class JsonSource final : public EventSource {
 public:
  JsonSource(std::string_view text, std::string file, Limits limits)
      : original_(text), file_(std::move(file)) {
    // JSON text never holds a NUL byte, and the in-situ reader would take one for the end of the
    // input (silently ignoring what follows), so it is refused first.
    if (const void* nul = std::memchr(text.data(), '\0', text.size()))
      throw ParseError(loc_at(static_cast<size_t>(static_cast<const char*>(nul) - text.data())),
                       "binary data: the file contains a NUL byte, expected JSON text");
    // RapidJSON's UTF-8 validation takes a whole multi-byte sequence before checking it, so a
    // sequence cut off by the end of the text is read past the terminating NUL: pad with NULs.
    buf_.reserve(text.size() + kPadding);
    buf_.assign(text);
    buf_.append(kPadding - 1, '\0');
    rapidjson::InsituStringStream is(buf_.data());
    Recorder rec{&events_, &is, buf_.data(), 0, limits.max_depth};
    events_.reserve(text.size() / 8 + 16);
    rapidjson::Reader reader;
    reader.Parse<kFlags>(is, rec);
    if (rec.too_deep_at != SIZE_MAX)
      throw ParseError(loc_at(rec.too_deep_at), "nesting deeper than " + std::to_string(limits.max_depth) + " levels");
    if (rec.bad_string_at != SIZE_MAX)
      throw ParseError(loc_at(rec.bad_string_at),
                       "malformed JSON: a \\u escape encodes an unpaired UTF-16 surrogate, which is not a character");
    if (reader.HasParseError())
      throw ParseError(loc_at(reader.GetErrorOffset()),
                       std::string("malformed JSON: ") + rapidjson::GetParseError_En(reader.GetParseErrorCode()));
  }
  const std::string& file() const override { return file_; }

  void next(Event& ev) override {
    if (pos_ == events_.size()) {
      ev.type = Event::End;
      return;
    }
    const Compact& c = events_[pos_++];
    ev.type = c.type;
    ev.style = c.style;
    ev.flow = false;
    ev.tag.clear();
    if (c.str) ev.text.assign(c.str, c.len);
    SourceLoc l = loc_at(c.offset);
    ev.line = l.line;
    ev.column = l.column;
  }

 private:
  // Line and column of a byte offset; offsets mostly grow, so newlines are counted once.
  SourceLoc loc_at(size_t off) {
    off = std::min(off, original_.size());
    if (off < counted_) {
      counted_ = 0;
      line_ = 1;
      line_start_ = 0;
    }
    while (counted_ < off) {
      const void* nl = std::memchr(original_.data() + counted_, '\n', off - counted_);
      if (!nl) {
        counted_ = off;
        break;
      }
      size_t p = static_cast<size_t>(static_cast<const char*>(nl) - original_.data());
      ++line_;
      line_start_ = p + 1;
      counted_ = p + 1;
    }
    return {file_, line_, static_cast<uint32_t>(off - line_start_ + 1)};
  }

  static constexpr size_t kPadding = 4;  // the longest UTF-8 sequence
  std::string_view original_;
  std::string file_;
  std::string buf_;  // the copy that RapidJSON decodes strings into
  std::vector<Compact> events_;
  size_t pos_ = 0;
  size_t counted_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::unique_ptr<EventSource> make_json_source(std::string_view text, std::string file, Limits limits) {
  return std::make_unique<JsonSource>(text, std::move(file), limits);
}

}  // namespace amanda::text
