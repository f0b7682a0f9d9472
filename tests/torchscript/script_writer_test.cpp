// The TorchScript writer's parts checked with the project's reader (the end-to-end check against
// torch itself is tests/pytorch_export/): the zip writer's entries read back by ZipArchive with
// their bytes, names and CRCs, every entry's data on a 64-byte boundary; data.pkl read back by the
// unpickler.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "amanda/support/file.h"
#include "amanda/support/gate.h"
#include "frameworks/torch/script_writer.h"
#include "frameworks/torch/zip_writer.h"
#include "frameworks/torchscript/pickle.h"
#include "frameworks/torchscript/zip.h"

using namespace amanda;

namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("amanda_sw_") + std::to_string(::getpid()) + name)).string();
}

TEST(ZipWriter, EntriesReadBackAlignedWithTheirBytes) {
  std::string path = temp_path("a.zip");
  std::vector<std::pair<std::string, std::string>> want = {
      {"archive/data.pkl", "\x80\x02)."}, {"archive/data/0", std::string(1000, '\x7f')}, {"archive/data/1", ""},
      {"archive/code/__torch__/m.py", "class M(Module):\n  pass\n"}, {"archive/version", "3\n"}};
  for (size_t i = 0; i < 37; ++i) want[1].second[i * 7] = static_cast<char>(i);
  {
    WriteGate gate(path);
    torch_frontend::ZipWriter zip(gate.main());
    for (const auto& [n, b] : want) zip.add(n, b);
    zip.finish();
    gate.commit();
  }
  torchscript::ZipArchive z(map_file(path), path);
  ASSERT_EQ(z.entries().size(), want.size());
  for (const auto& [n, b] : want) {
    const torchscript::ZipEntry* e = z.find(n);
    ASSERT_NE(e, nullptr) << n;
    EXPECT_EQ(e->data_offset % torch_frontend::ZipWriter::kAlign, 0u) << n;
    EXPECT_EQ(e->method, 0) << n;
    EXPECT_EQ(std::string(z.data(*e)), b) << n;
  }
  std::remove(path.c_str());
}

TEST(ModulePickle, ReadsBackAsTheModuleWithItsTensors) {
  ir::Tensor w = ir::Tensor::from_bytes(ir::DType::Float32, {2, 3}, std::string(24, '\0'));
  ir::Tensor i = ir::Tensor::from_bytes(ir::DType::Int64, {}, std::string(8, '\0'));
  torch_frontend::ModuleSource m;
  m.qualified_name = "__torch__.amanda_export.Model";
  m.attrs = {{"fc_weight", &w, true}, {"step", &i, false}};
  std::string bytes = torch_frontend::module_pickle(m);
  auto root = torchscript::unpickle(bytes, "data.pkl");
  ASSERT_TRUE(root);
  using K = torchscript::PyObject::Kind;
  ASSERT_EQ(root->kind, K::Call);
  EXPECT_TRUE(root->new_object);
  EXPECT_EQ(root->items[0]->str, "__torch__.amanda_export.Model");
  ASSERT_TRUE(root->state);
  ASSERT_EQ(root->state->kind, K::Dict);
  std::vector<std::string> keys;
  for (const auto& [k, v] : root->state->dict) keys.push_back(k->str);
  EXPECT_EQ(keys, (std::vector<std::string>{"fc_weight", "step", "training"}));
  // fc_weight = _rebuild_tensor_v2(storage 'FloatStorage' key "0" numel 6, offset 0, (2, 3), (3, 1), requires_grad True, ...)
  const auto& wt = root->state->dict[0].second;
  ASSERT_EQ(wt->kind, K::Call);
  EXPECT_EQ(wt->items[0]->str, "torch._utils._rebuild_tensor_v2");
  const auto& args = wt->items[1]->items;
  ASSERT_GE(args.size(), 5u);
  ASSERT_EQ(args[0]->kind, K::PersistentId);
  const auto& id = args[0]->items[0]->items;
  EXPECT_EQ(id[1]->str, "torch.FloatStorage");
  EXPECT_EQ(id[2]->str, "0");
  EXPECT_EQ(id[4]->i, 6);
  EXPECT_EQ(args[2]->items.size(), 2u);
  EXPECT_EQ(args[3]->items[0]->i, 3);
  EXPECT_TRUE(args[4]->b);
  const auto& st = root->state->dict[1].second->items[1]->items;
  EXPECT_EQ(st[0]->items[0]->items[1]->str, "torch.LongStorage");
  EXPECT_EQ(st[2]->items.size(), 0u);  // a 0-d tensor: shape ()
  EXPECT_FALSE(st[4]->b);              // a buffer
  torchscript::dismantle(root);
}

}  // namespace
