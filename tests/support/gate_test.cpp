// The gate: a read sandbox rooted at the model's folder and a write sandbox that stages output.
#include "amanda/support/gate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "amanda/support/diagnostics.h"

namespace amanda {
namespace {

namespace fs = std::filesystem;

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void put(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << p;
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  ::close(fd);
}

// Every file under `dir`, relative, sorted (folders as "name/").
std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    std::string r = it->path().lexically_relative(dir).string();
    out.push_back(it->is_directory() && !it->is_symlink() ? r + "/" : r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class GateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "amanda_gate_XXXXXX").string();
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    dir_ = t;
    put(dir_ / "outside" / "secret.bin", "SECRET");
    put(dir_ / "model" / "model.onnx", "ONNXBYTES");
    put(dir_ / "model" / "weights" / "w.bin", "WEIGHTS");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(GateTest, ReadsTheModelAndTheFilesItNamesInsideItsFolder) {
  ReadGate g((dir_ / "model" / "model.onnx").string());
  EXPECT_EQ(g.root(), (dir_ / "model").string());
  EXPECT_FALSE(g.model_is_folder());
  EXPECT_EQ(g.peek(4), "ONNX");
  EXPECT_EQ(g.peek(100), "ONNXBYTES");
  EXPECT_EQ(g.map_model()->view(), "ONNXBYTES");
  auto w = g.map("weights/w.bin", "external data");
  EXPECT_EQ(w->view(), "WEIGHTS");
  EXPECT_EQ(g.map("./weights//w.bin", "external data")->view(), "WEIGHTS");
  EXPECT_EQ(g.map("weights/w.bin", "external data").get(), w.get());  // mapped once, shared
  EXPECT_TRUE(g.has_file("weights/w.bin"));
  EXPECT_FALSE(g.has_file("weights"));
  EXPECT_TRUE(g.has_folder("weights"));
  EXPECT_FALSE(g.has_folder("weights/w.bin"));
  EXPECT_EQ(g.list("."), (std::vector<std::string>{"model.onnx", "weights"}));
  EXPECT_EQ(g.list("weights"), (std::vector<std::string>{"w.bin"}));
}

TEST_F(GateTest, AFolderModelIsItsOwnRoot) {
  ReadGate g((dir_ / "model").string() + "/");
  EXPECT_TRUE(g.model_is_folder());
  EXPECT_EQ(g.root(), (dir_ / "model").string());
  EXPECT_EQ(g.peek(4), "");
  EXPECT_NE(message_of([&] { g.map_model(); }).find("is a folder"), std::string::npos);
  EXPECT_EQ(g.map("model.onnx", "file")->view(), "ONNXBYTES");
}

TEST_F(GateTest, NamesThatLeaveTheFolderAreRefused) {
  ReadGate g((dir_ / "model" / "model.onnx").string());
  for (std::string name : std::vector<std::string>{"../outside/secret.bin", "weights/../../outside/secret.bin", (dir_ / "outside/secret.bin").string(),
                           std::string("weights\\w.bin"), std::string("w\0x", 3), std::string(""), std::string(".")}) {
    std::string m = message_of([&] { g.map(name, "external data"); });
    EXPECT_NE(m.find("is refused"), std::string::npos) << name << ": " << m;
    EXPECT_FALSE(g.has_file(name)) << name;
  }
}

TEST_F(GateTest, SymbolicLinksInAnyComponentAreRefused) {
  fs::create_symlink(dir_ / "outside", dir_ / "model" / "sub");
  fs::create_symlink(dir_ / "outside" / "secret.bin", dir_ / "model" / "leaf.bin");
  fs::create_symlink("w.bin", dir_ / "model" / "weights" / "inside.bin");  // even one that stays inside
  ReadGate g((dir_ / "model" / "model.onnx").string());
  EXPECT_NE(message_of([&] { g.map("sub/secret.bin", "x"); }).find("goes through a symbolic link ('sub')"), std::string::npos);
  EXPECT_NE(message_of([&] { g.map("leaf.bin", "x"); }).find("it is a symbolic link"), std::string::npos);
  EXPECT_NE(message_of([&] { g.map("weights/inside.bin", "x"); }).find("it is a symbolic link"), std::string::npos);
  EXPECT_FALSE(g.has_folder("sub"));
  EXPECT_FALSE(g.has_file("leaf.bin"));
  EXPECT_NE(message_of([&] { g.list("sub"); }).find("symbolic link"), std::string::npos);
}

TEST_F(GateTest, FifosDevicesAndFoldersAreRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "model" / "fifo.bin").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir_ / "model" / "x.pb").c_str(), 0600), 0);
  fs::create_directories(dir_ / "model" / "folder.bin");
  auto t0 = std::chrono::steady_clock::now();
  ReadGate g((dir_ / "model" / "model.onnx").string());
  EXPECT_NE(message_of([&] { g.map("fifo.bin", "x"); }).find("it is a FIFO, not a regular file"), std::string::npos);
  EXPECT_NE(message_of([&] { g.map("folder.bin", "x"); }).find("it is a folder, not a regular file"), std::string::npos);
  EXPECT_FALSE(g.has_file("fifo.bin"));
  // The model itself a FIFO: peek gives nothing, map_model refuses; neither blocks.
  ReadGate f((dir_ / "model" / "x.pb").string());
  EXPECT_EQ(f.peek(16), "");
  EXPECT_NE(message_of([&] { f.map_model(); }).find("FIFO"), std::string::npos);
  ReadGate d("/dev/zero");
  EXPECT_EQ(d.peek(16), "");
  EXPECT_NE(message_of([&] { d.map_model(); }).find("character device"), std::string::npos);
  ReadGate root("/dev/");
  EXPECT_NE(message_of([&] { root.map("null", "x"); }).find("character device"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(GateTest, AModelNamingTooManyFilesIsRefused) {
  for (size_t i = 0; i <= ReadGate::kMaxFiles; ++i) put(dir_ / "model" / "shards" / std::to_string(i), "x");
  ReadGate g((dir_ / "model" / "model.onnx").string());
  for (size_t i = 0; i < ReadGate::kMaxFiles; ++i) g.map("shards/" + std::to_string(i), "shard");
  std::string m = message_of([&] { g.map("shards/" + std::to_string(ReadGate::kMaxFiles), "shard"); });
  EXPECT_NE(m.find("more than 10000 files"), std::string::npos) << m;
  EXPECT_NE(message_of([&] { g.list("shards", 100); }).find("more than 100 entries"), std::string::npos);
}

TEST_F(GateTest, WriterFilesAppearOnlyOnCommit) {
  fs::path out = dir_ / "out" / "model.json";
  fs::create_directories(out.parent_path());
  {
    WriteGate w(out.string());
    w.main().write("{}");
    w.create("group1-shard1of1.bin").write("BIN");
    EXPECT_EQ(tree(dir_ / "out").size(), 2u);  // two temporaries, not the targets
    EXPECT_FALSE(fs::exists(out));
    w.commit();
    EXPECT_EQ(w.files(), (std::vector<std::string>{"group1-shard1of1.bin", "model.json"}));
  }
  EXPECT_EQ(tree(dir_ / "out"), (std::vector<std::string>{"group1-shard1of1.bin", "model.json"}));
}

TEST_F(GateTest, AGateDestroyedWithoutCommitLeavesNothing) {
  fs::path out = dir_ / "out" / "model.json";
  fs::create_directories(out.parent_path());
  {
    WriteGate w(out.string());
    w.main().write("{}");
    w.create("a.bin").write("A");
  }
  EXPECT_TRUE(tree(dir_ / "out").empty());
  {
    WriteGate w((dir_ / "out" / "saved").string());
    w.make_folder_output();
    w.create("saved_model.pb").write("PB");
    w.create("variables/variables.index").write("I");
  }
  EXPECT_TRUE(tree(dir_ / "out").empty());
}

TEST_F(GateTest, DiscardedAndStaleFilesAreNotLeft) {
  fs::path out = dir_ / "out" / "m.onnx";
  fs::create_directories(out.parent_path());
  {
    WriteGate w(out.string());
    w.create("m.onnx.data").write("D");
    w.discard("m.onnx.data");
    w.main().write("M");
    w.commit();
    EXPECT_EQ(w.files(), (std::vector<std::string>{"m.onnx"}));
  }
  EXPECT_EQ(tree(dir_ / "out"), (std::vector<std::string>{"m.onnx"}));
  fs::path sm = dir_ / "out" / "sm";
  fs::create_directories(sm / "variables");
  put(sm / "variables" / "variables.index", "OLD");
  {
    WriteGate w(sm.string());
    w.make_folder_output();
    w.create("saved_model.pb").write("PB");
    w.remove_on_commit("variables/variables.index");
    w.commit();
  }
  EXPECT_EQ(tree(sm), (std::vector<std::string>{"saved_model.pb", "variables/"}));
}

TEST_F(GateTest, WriterNamesAreChecked) {
  fs::path out = dir_ / "out" / "model.json";
  fs::create_directories(out.parent_path());
  WriteGate w(out.string());
  for (std::string name : std::vector<std::string>{"../x.bin", "/tmp/x.bin", ".ssh/authorized_keys", "a\\b", "", "model.json"}) {
    std::string m = message_of([&] { w.create(name); });
    EXPECT_NE(m.find("is refused"), std::string::npos) << name << ": " << m;
  }
  w.create("x.bin");
  EXPECT_NE(message_of([&] { w.create("x.bin"); }).find("already created"), std::string::npos);
  EXPECT_TRUE(w.files().empty());
}

TEST_F(GateTest, AtMostMaxFilesPerOutput) {
  fs::path out = dir_ / "out" / "model.json";
  fs::create_directories(out.parent_path());
  WriteGate w(out.string());
  std::string m;
  size_t made = 0;
  for (size_t i = 0; i <= WriteGate::kMaxFiles && m.empty(); ++i) {
    m = message_of([&] { w.create("s" + std::to_string(i)); });
    if (m.empty()) ++made;
  }
  EXPECT_EQ(made, WriteGate::kMaxFiles);
  EXPECT_NE(m.find("at most"), std::string::npos) << m;
}

TEST_F(GateTest, AFolderOutputIsStagedAndRenamedIntoPlace) {
  fs::path out = dir_ / "out" / "saved";
  fs::create_directories(out.parent_path());
  {
    WriteGate w(out.string() + "/");
    w.make_folder_output();
    w.create("saved_model.pb").write("PB");
    w.create("variables/variables.index").write("I");
    w.create("variables/variables.data-00000-of-00001").write("D");
    EXPECT_FALSE(fs::exists(out));
    w.commit();
  }
  EXPECT_EQ(tree(dir_ / "out"), (std::vector<std::string>{"saved/", "saved/saved_model.pb", "saved/variables/",
                                                          "saved/variables/variables.data-00000-of-00001",
                                                          "saved/variables/variables.index"}));
  // Writing again into the existing folder replaces its files; a link in the way is not followed.
  fs::remove(out / "variables" / "variables.index");
  fs::create_symlink(dir_ / "outside" / "secret.bin", out / "variables" / "variables.index");
  {
    WriteGate w(out.string());
    w.make_folder_output();
    w.create("saved_model.pb").write("PB2");
    w.create("variables/variables.index").write("I2");
    w.commit();
  }
  EXPECT_FALSE(fs::is_symlink(out / "variables" / "variables.index"));
  EXPECT_EQ(tree(dir_ / "outside"), (std::vector<std::string>{"secret.bin"}));
  EXPECT_EQ(fs::file_size(dir_ / "outside" / "secret.bin"), 6u);
  EXPECT_EQ(tree(dir_ / "out").size(), 5u);  // no staging folder left
  // A symbolic link where a subfolder belongs is refused, nothing moved.
  fs::remove_all(out / "variables");
  fs::create_symlink(dir_ / "outside", out / "variables");
  {
    WriteGate w(out.string());
    w.make_folder_output();
    w.create("variables/variables.index").write("I3");
    EXPECT_NE(message_of([&] { w.commit(); }).find("not a folder"), std::string::npos);
  }
  EXPECT_EQ(tree(dir_ / "outside"), (std::vector<std::string>{"secret.bin"}));
  EXPECT_EQ(tree(dir_ / "out"), (std::vector<std::string>{"saved/", "saved/saved_model.pb", "saved/variables"}));
}

TEST_F(GateTest, AnOutputThatIsAFolderLeavesNothing) {
  fs::path out = dir_ / "out" / "model.onnx";
  fs::create_directories(out);
  {
    WriteGate w(out.string());
    w.main().write("X");
    w.create("model.onnx.data").write("D");
    EXPECT_NE(message_of([&] { w.commit(); }).find("is a folder"), std::string::npos);
  }
  EXPECT_EQ(tree(dir_ / "out"), (std::vector<std::string>{"model.onnx/"}));
}

}  // namespace
}  // namespace amanda
