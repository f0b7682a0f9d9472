// TensorFlow: GraphDef import + export against protobuf's own parse + serialize of the same bytes
// (the floor), and reading a TF.js graph model (model.json + shards). Models: every TF.js graph
// model in $AMANDA_BENCH_TFJS_DIR (default: @vladmandic/human's models/ under tests/tensorflow/js);
// each also as a frozen .pb (weights inline) made by the exporter. scripts/tf_speed.sh runs this
// next to TF.js's own loader in Node and prints the ratios (docs/performance.md).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "amanda/frameworks/tensorflow/graphdef.h"
#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda_tf_graph.pb.h"

namespace {

namespace fs = std::filesystem;

void register_all() {
  const char* env = std::getenv("AMANDA_BENCH_TFJS_DIR");
  fs::path dir = env ? fs::path(env)
                     : fs::path(AMANDA_SOURCE_DIR) / "tests/tensorflow/js/node_modules/@vladmandic/human/models";
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (amanda::tf_frontend::is_tfjs_file(e.path().string())) models.push_back(e.path());
  std::sort(models.begin(), models.end());
  for (const auto& m : models) {
    std::string name = m.stem().string();
    auto pb = std::make_shared<std::string>(amanda::tf_frontend::export_graph_bytes(amanda::tf_frontend::read_tfjs(m.string())));
    benchmark::RegisterBenchmark(("protobuf_parse_serialize/" + name).c_str(), [pb](benchmark::State& st) {
      for (auto _ : st) {
        tensorflow::GraphDef g;
        g.ParseFromString(*pb);
        std::string out = g.SerializeAsString();
        benchmark::DoNotOptimize(out);
      }
      st.counters["bytes"] = static_cast<double>(pb->size());
    })->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("amanda_import_export_pb/" + name).c_str(), [pb](benchmark::State& st) {
      for (auto _ : st) {
        auto doc = amanda::tf_frontend::import_graph_bytes(*pb);
        std::string out = amanda::tf_frontend::export_graph_bytes(doc);
        benchmark::DoNotOptimize(out);
      }
    })->Unit(benchmark::kMillisecond);
    // The two halves, for profiling (scripts/tf_speed.sh reports only their sum).
    benchmark::RegisterBenchmark(("amanda_import_pb/" + name).c_str(), [pb](benchmark::State& st) {
      for (auto _ : st) {
        auto doc = amanda::tf_frontend::import_graph_bytes(*pb);
        benchmark::DoNotOptimize(doc);
      }
    })->Unit(benchmark::kMillisecond);
    auto doc = std::make_shared<amanda::text::Document>(amanda::tf_frontend::import_graph_bytes(*pb));
    benchmark::RegisterBenchmark(("amanda_export_pb/" + name).c_str(), [doc](benchmark::State& st) {
      for (auto _ : st) {
        std::string out = amanda::tf_frontend::export_graph_bytes(*doc);
        benchmark::DoNotOptimize(out);
      }
    })->Unit(benchmark::kMillisecond);
    std::string path = m.string();
    benchmark::RegisterBenchmark(("amanda_read_tfjs/" + name).c_str(), [path](benchmark::State& st) {
      for (auto _ : st) {
        auto doc = amanda::tf_frontend::read_tfjs(path);
        benchmark::DoNotOptimize(doc);
      }
    })->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
