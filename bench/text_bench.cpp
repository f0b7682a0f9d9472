// Reading and writing the YAML and JSON text forms of a 100,000-op TensorFlow-like graph.
// Targets (from the issue): YAML read >= 40 MB/s, write >= 80 MB/s; JSON at least as fast.
// MB/s = bytes of text / seconds, 1 MB = 10^6 bytes (the "MB/s" counter; benchmark prints it
// with an SI "M" suffix).
//
// Floors, on the same text: libyaml's raw event loop (yaml_parser_parse only) and RapidJSON's
// SAX reader with a do-nothing handler. Between the floor and text::parse sit Amanda's event
// layer (timed alone as *Events) and the builder that turns events into the IR.
//
// AMANDA_BENCH_TEXT_OPS sets the graph size (default 100,000 ops).
#include <benchmark/benchmark.h>
#include <rapidjson/reader.h>
#include <yaml.h>

#include "bench_util.h"
#include "graph_gen.h"

namespace {

using namespace amanda;

struct Corpus {
  text::Document doc;
  std::string yaml, json;
  Corpus() : doc(amanda::bench::make_tf_document(amanda::bench::env_size("AMANDA_BENCH_TEXT_OPS", 100'000))) {
    yaml = text::to_text(doc, text::Format::Yaml);
    json = text::to_text(doc, text::Format::Json);
  }
};

const Corpus& corpus() {
  static const Corpus c;
  return c;
}

const std::string& text_of(text::Format f) { return f == text::Format::Yaml ? corpus().yaml : corpus().json; }

void rate(benchmark::State& st, size_t bytes) {
  st.counters["MB/s"] = benchmark::Counter(static_cast<double>(bytes) / 1e6, benchmark::Counter::kIsIterationInvariantRate,
                                           benchmark::Counter::kIs1000);
  // The counter is in MB; with kIsRate benchmark prints e.g. "45.1/s" meaning 45.1 MB/s.
  st.counters["text_MB"] = static_cast<double>(bytes) / 1e6;
  st.counters["ops"] = static_cast<double>(corpus().doc.graph.op_count());
}

// The file name matters: a source location carries it, so a name longer than std::string's
// inline buffer (15 chars) costs an allocation wherever the reader makes a location. Read with a
// realistic path, and with a short one for comparison.
constexpr const char* kLongName = "/home/user/models/tf_resnet_100k_ops.graph";

void BM_Read(benchmark::State& st, text::Format f, const char* file_name) {
  const std::string& t = text_of(f);
  const std::string name = file_name;
  for (auto _ : st) {
    Diagnostics diags;
    text::Document d = text::parse(t, f, name, diags);
    if (d.graph.op_count() != corpus().doc.graph.op_count()) st.SkipWithError("parse lost ops");
    benchmark::DoNotOptimize(d.graph.edge_count());
  }
  rate(st, t.size());
}
BENCHMARK_CAPTURE(BM_Read, yaml, text::Format::Yaml, kLongName)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Read, json, text::Format::Json, kLongName)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Read, yaml_short_name, text::Format::Yaml, "g.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Read, json_short_name, text::Format::Json, "g.json")->Unit(benchmark::kMillisecond);

void BM_Write(benchmark::State& st, text::Format f) {
  size_t bytes = 0;
  for (auto _ : st) {
    std::string s = text::to_text(corpus().doc, f);
    bytes = s.size();
    benchmark::DoNotOptimize(s.data());
  }
  if (bytes != text_of(f).size()) st.SkipWithError("output differs from the first write");
  rate(st, bytes);
}
BENCHMARK_CAPTURE(BM_Write, yaml, text::Format::Yaml)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Write, json, text::Format::Json)->Unit(benchmark::kMillisecond);

// Amanda's event layer alone (text -> text::Event stream), without building the IR.
void BM_Events(benchmark::State& st, text::Format f) {
  const std::string& t = text_of(f);
  for (auto _ : st) {
    auto src = f == text::Format::Yaml ? text::make_yaml_source(t, kLongName) : text::make_json_source(t, kLongName);
    text::Event ev;
    size_t n = 0;
    do {
      src->next(ev);
      ++n;
    } while (ev.type != text::Event::End);
    benchmark::DoNotOptimize(n);
  }
  rate(st, t.size());
}
BENCHMARK_CAPTURE(BM_Events, yaml, text::Format::Yaml)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Events, json, text::Format::Json)->Unit(benchmark::kMillisecond);

// The floor for YAML: libyaml's event parser, events deleted at once, nothing else.
void BM_FloorLibyamlEvents(benchmark::State& st) {
  const std::string& t = corpus().yaml;
  for (auto _ : st) {
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, reinterpret_cast<const unsigned char*>(t.data()), t.size());
    size_t n = 0;
    for (;;) {
      yaml_event_t e;
      if (!yaml_parser_parse(&p, &e)) {
        st.SkipWithError("libyaml rejected the text");
        break;
      }
      bool end = e.type == YAML_STREAM_END_EVENT;
      yaml_event_delete(&e);
      ++n;
      if (end) break;
    }
    yaml_parser_delete(&p);
    benchmark::DoNotOptimize(n);
  }
  rate(st, t.size());
}
BENCHMARK(BM_FloorLibyamlEvents)->Unit(benchmark::kMillisecond);

// The floor for JSON: RapidJSON's SAX reader with the flags Amanda uses except in situ (which
// would need a fresh copy of the text per run), and a handler that does nothing.
void BM_FloorRapidjsonSax(benchmark::State& st) {
  const std::string& t = corpus().json;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNanAndInfFlag |
                              rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseValidateEncodingFlag;
  for (auto _ : st) {
    rapidjson::StringStream is(t.c_str());
    rapidjson::BaseReaderHandler<> h;
    rapidjson::Reader r;
    if (r.Parse<kFlags>(is, h).IsError()) st.SkipWithError("RapidJSON rejected the text");
  }
  rate(st, t.size());
}
BENCHMARK(BM_FloorRapidjsonSax)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
