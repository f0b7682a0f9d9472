// ONNX import + export against protobuf's own parse + serialize of the same bytes (the floor).
// Models: every file named in $AMANDA_BENCH_ONNX (':'-separated), plus a synthetic model of
// $AMANDA_BENCH_ONNX_NODES nodes (default 100,000) built here. scripts/onnx_speed.sh runs this
// next to Python's onnx.load + onnx.save on the same files and prints the ratios.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "amanda/frameworks/onnx/infer.h"
#include "amanda/frameworks/onnx/model.h"

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A chain of Conv -> Add -> Relu blocks with small initializers, like a plain CNN body.
std::string synthetic_model(size_t nodes) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("amanda-bench");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("synthetic");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d : {1, 8, 32, 32}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  std::string prev = "x";
  for (size_t i = 0; i < nodes; ++i) {
    std::string out = "v" + std::to_string(i);
    auto* n = g->add_node();
    n->set_name("n" + std::to_string(i));
    switch (i % 3) {
      case 0: {
        n->set_op_type("Conv");
        std::string w = "w" + std::to_string(i);
        auto* t = g->add_initializer();
        t->set_name(w);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int d : {8, 8, 1, 1}) t->add_dims(d);
        t->set_raw_data(std::string(8 * 8 * 4, '\1'));
        n->add_input(prev);
        n->add_input(w);
        auto* a = n->add_attribute();
        a->set_name("kernel_shape");
        a->set_type(onnx::AttributeProto::INTS);
        a->add_ints(1);
        a->add_ints(1);
        break;
      }
      case 1: {
        n->set_op_type("Add");
        std::string b = "b" + std::to_string(i);
        auto* t = g->add_initializer();
        t->set_name(b);
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(8);
        t->add_dims(1);
        t->add_dims(1);
        t->set_raw_data(std::string(8 * 4, '\2'));
        n->add_input(prev);
        n->add_input(b);
        break;
      }
      default: n->set_op_type("Relu"); n->add_input(prev);
    }
    n->add_output(out);
    prev = out;
  }
  g->add_output()->set_name(prev);
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

void BM_ProtobufParseSerialize(benchmark::State& state, std::string bytes) {
  for (auto _ : state) {
    onnx::ModelProto m;
    m.ParseFromString(bytes);
    std::string out;
    m.SerializeToString(&out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["MB"] = static_cast<double>(bytes.size()) / 1e6;
}

// The tool's path: the model's bytes are in memory (read_model maps the file) and the tensors
// borrow them; export writes them once.
void BM_AmandaImportExport(benchmark::State& state, std::string bytes) {
  auto buf = amanda::make_buffer(bytes);
  for (auto _ : state) {
    auto doc = amanda::onnx_frontend::import_model_buffer(buf);
    std::string out = amanda::onnx_frontend::export_model_bytes(doc);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["MB"] = static_cast<double>(bytes.size()) / 1e6;
}

// From a string_view the caller keeps: the importer copies the bytes once first.
void BM_AmandaImportExportCopy(benchmark::State& state, std::string bytes) {
  for (auto _ : state) {
    auto doc = amanda::onnx_frontend::import_model_bytes(bytes);
    std::string out = amanda::onnx_frontend::export_model_bytes(doc);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["MB"] = static_cast<double>(bytes.size()) / 1e6;
}

void BM_AmandaImport(benchmark::State& state, std::string bytes) {
  auto buf = amanda::make_buffer(bytes);
  for (auto _ : state) {
    auto doc = amanda::onnx_frontend::import_model_buffer(buf);
    benchmark::DoNotOptimize(&doc);
  }
}

// Type and shape inference of the imported graph (libonnx's per-op functions over ir::Graph);
// the import is outside the timing.
void BM_AmandaInfer(benchmark::State& state, std::string bytes) {
  auto buf = amanda::make_buffer(bytes);
  size_t typed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto doc = amanda::onnx_frontend::import_model_buffer(buf);
    state.ResumeTiming();
    auto r = amanda::onnx_frontend::infer_types(doc.graph);
    typed = r.typed_ports;
    state.PauseTiming();
    { auto gone = std::move(doc); }  // freeing the graph is not inference either
    state.ResumeTiming();
  }
  state.counters["typed_outputs"] = static_cast<double>(typed);
}

}  // namespace

int main(int argc, char** argv) {
  size_t nodes = 100000;
  if (const char* n = std::getenv("AMANDA_BENCH_ONNX_NODES")) nodes = std::strtoull(n, nullptr, 10);
  std::vector<std::pair<std::string, std::string>> models;
  models.emplace_back("synthetic_" + std::to_string(nodes), synthetic_model(nodes));
  if (const char* list = std::getenv("AMANDA_BENCH_ONNX")) {
    std::string s(list);
    size_t start = 0;
    while (start < s.size()) {
      size_t e = s.find(':', start);
      if (e == std::string::npos) e = s.size();
      std::string path = s.substr(start, e - start);
      if (!path.empty()) models.emplace_back(std::filesystem::path(path).stem().string(), read_bytes(path));
      start = e + 1;
    }
  }
  for (const auto& [name, bytes] : models) {
    benchmark::RegisterBenchmark(("protobuf/" + name).c_str(), BM_ProtobufParseSerialize, bytes)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("amanda/" + name).c_str(), BM_AmandaImportExport, bytes)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("amanda_import/" + name).c_str(), BM_AmandaImport, bytes)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("amanda_copy/" + name).c_str(), BM_AmandaImportExportCopy, bytes)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("amanda_infer/" + name).c_str(), BM_AmandaInfer, bytes)->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
