// YAML events from libyaml. Aliases are replayed from recorded anchor events within a budget, so
// an alias bomb ("billion laughs") is an error, not an out-of-memory crash.
#include <yaml.h>

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstdio>
#include <new>
#include <vector>

#include "amanda/text/events.h"

namespace amanda::text {

namespace {

class YamlSource final : public EventSource {
 public:
  YamlSource(std::string_view text, std::string file, Limits limits)
      : text_(text), file_(std::move(file)), limits_(limits) {
    // Checked before the parser exists: a throwing constructor runs no destructor.
    if (text.find('\0') != std::string_view::npos)
      throw ParseError(loc_of_offset(text, text.find('\0')), "binary data: the file contains a NUL byte, expected YAML text");
    if (!yaml_parser_initialize(&parser_)) throw std::bad_alloc();
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  }
  ~YamlSource() override { yaml_parser_delete(&parser_); }

  const std::string& file() const override { return file_; }

  void next(Event& ev) override {
    for (;;) {
      if (!replay_.empty()) {
        Frame& f = replay_.back();
        if (f.pos == f.events->size()) {
          replay_.pop_back();
          continue;
        }
        ev = (*f.events)[f.pos++];
        deliver(ev, std::string());
        return;
      }
      if (finished_) {
        ev.type = Event::End;
        return;
      }
      yaml_event_t e;
      if (!yaml_parser_parse(&parser_, &e)) {
        SourceLoc loc{file_, static_cast<uint32_t>(parser_.problem_mark.line + 1),
                      static_cast<uint32_t>(parser_.problem_mark.column + 1)};
        std::string msg = parser_.problem ? parser_.problem : "malformed YAML";
        // Reader errors (bad encoding, control characters) carry a byte offset, not a mark.
        if (parser_.error == YAML_READER_ERROR) {
          loc = loc_of_offset(text_, std::min(parser_.problem_offset, text_.size()));
          if (parser_.problem_value >= 0) msg += " (byte or character " + hex(parser_.problem_value) + ")";
        }
        if (parser_.context) msg = std::string(parser_.context) + ": " + msg;
        throw ParseError(loc, "malformed YAML: " + msg);
      }
      struct Guard {
        yaml_event_t* e;
        ~Guard() { yaml_event_delete(e); }
      } guard{&e};
      ev.line = static_cast<uint32_t>(e.start_mark.line + 1);
      ev.column = static_cast<uint32_t>(e.start_mark.column + 1);
      ev.tag.clear();
      ev.flow = false;
      std::string anchor;
      switch (e.type) {
        case YAML_STREAM_START_EVENT: continue;
        case YAML_DOCUMENT_START_EVENT:
          if (++documents_ > 1) throw ParseError(loc(ev), "more than one YAML document in the file; expected one");
          continue;
        case YAML_DOCUMENT_END_EVENT: continue;
        case YAML_STREAM_END_EVENT:
          finished_ = true;
          ev.type = Event::End;
          return;
        case YAML_ALIAS_EVENT: {
          std::string name(reinterpret_cast<const char*>(e.data.alias.anchor));
          auto it = anchors_.find(name);
          if (it == anchors_.end()) {
            for (const auto& r : recorders_)
              if (r.name == name) throw ParseError(loc(ev), "alias *" + name + " refers to its own anchor (a recursive structure)");
            throw ParseError(loc(ev), "alias *" + name + " has no anchor &" + name + " before it");
          }
          // The recording is already fully expanded, so its size is what this alias replays:
          // charge the budget before replaying anything, and blame the alias itself.
          if (!it->second)
            throw ParseError(loc(ev), "alias *" + name + " refers to an anchor of more than " +
                                          std::to_string(limits_.max_alias_events) + " events; refusing to replay it");
          replayed_ += it->second->size();
          if (replayed_ > limits_.max_alias_events)
            throw ParseError(loc(ev), "YAML aliases expand to more than " + std::to_string(limits_.max_alias_events) +
                                          " events in total (an alias bomb?); refusing to expand *" + name);
          replay_.push_back({it->second.get(), 0});
          continue;
        }
        case YAML_SCALAR_EVENT:
          ev.type = Event::Scalar;
          ev.text.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
          ev.style = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? Event::Plain : Event::Quoted;
          if (e.data.scalar.tag) ev.tag = reinterpret_cast<const char*>(e.data.scalar.tag);
          if (e.data.scalar.anchor) anchor = reinterpret_cast<const char*>(e.data.scalar.anchor);
          break;
        case YAML_MAPPING_START_EVENT:
          ev.type = Event::MapStart;
          ev.flow = e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
          if (e.data.mapping_start.tag) ev.tag = reinterpret_cast<const char*>(e.data.mapping_start.tag);
          if (e.data.mapping_start.anchor) anchor = reinterpret_cast<const char*>(e.data.mapping_start.anchor);
          break;
        case YAML_MAPPING_END_EVENT: ev.type = Event::MapEnd; break;
        case YAML_SEQUENCE_START_EVENT:
          ev.type = Event::SeqStart;
          ev.flow = e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
          if (e.data.sequence_start.tag) ev.tag = reinterpret_cast<const char*>(e.data.sequence_start.tag);
          if (e.data.sequence_start.anchor) anchor = reinterpret_cast<const char*>(e.data.sequence_start.anchor);
          break;
        case YAML_SEQUENCE_END_EVENT: ev.type = Event::SeqEnd; break;
        default: continue;
      }
      deliver(ev, anchor);
      return;
    }
  }

 private:
  struct Recorder {
    std::string name;
    int depth;
    std::unique_ptr<std::vector<Event>> events;  // null once it outgrew the alias budget
  };
  struct Frame {
    const std::vector<Event>* events;
    size_t pos;
  };

  SourceLoc loc(const Event& ev) const { return {file_, ev.line, ev.column}; }
  static std::string hex(int v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%02x", v);
    return buf;
  }
  SourceLoc loc_of_offset(std::string_view text, size_t off) const {
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < off; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return {file_, line, col};
  }

  void deliver(const Event& ev, const std::string& anchor) {
    if (ev.type == Event::MapStart || ev.type == Event::SeqStart) {
      if (++depth_ > limits_.max_depth)
        throw ParseError(loc(ev), "nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    } else if (ev.type == Event::MapEnd || ev.type == Event::SeqEnd) {
      --depth_;
    }
    if (!anchor.empty()) recorders_.push_back({anchor, 0, std::make_unique<std::vector<Event>>()});
    for (size_t i = 0; i < recorders_.size();) {
      Recorder& r = recorders_[i];
      // An anchor too large to replay is only an error if an alias asks for it; until then it
      // costs nothing (a large document may carry an unused anchor).
      if (r.events) {
        r.events->push_back(ev);
        if (r.events->size() > limits_.max_alias_events) r.events.reset();
      }
      if (ev.type == Event::MapStart || ev.type == Event::SeqStart) ++r.depth;
      if (ev.type == Event::MapEnd || ev.type == Event::SeqEnd) --r.depth;
      if (r.depth == 0) {
        auto& slot = anchors_[r.name];
        if (slot) retired_.push_back(std::move(slot));  // a replay may still point at it
        slot = std::move(r.events);
        recorders_.erase(recorders_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
  }

  yaml_parser_t parser_{};
  std::string_view text_;
  std::string file_;
  Limits limits_;
  bool finished_ = false;
  int documents_ = 0;
  uint32_t depth_ = 0;
  uint64_t replayed_ = 0;
  std::vector<Recorder> recorders_;
  absl::flat_hash_map<std::string, std::unique_ptr<std::vector<Event>>> anchors_;
  std::vector<std::unique_ptr<std::vector<Event>>> retired_;
  std::vector<Frame> replay_;
};

}  // namespace

std::unique_ptr<EventSource> make_yaml_source(std::string_view text, std::string file, Limits limits) {
  return std::make_unique<YamlSource>(text, std::move(file), limits);
}

}  // namespace amanda::text
