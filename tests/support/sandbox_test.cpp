// The sandbox of the children that run model code (support/sandbox.h): in a forked child, after
// enter_sandbox, a file outside the allowed paths cannot be opened (where the kernel has
// Landlock), an allowed one can, the private folder can be written, and no TCP socket can be made.
#include "amanda/support/sandbox.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace amanda {
namespace {

namespace fs = std::filesystem;

// Runs `body` in a child; returns its exit code (bits of what it observed), or -signal.
template <class F>
int in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(Sandbox, ConfinesFilesAndNetworkOfAChild) {
  std::string t = (fs::temp_directory_path() / "amanda_sandbox_XXXXXX").string();
  ASSERT_NE(::mkdtemp(t.data()), nullptr);
  fs::path dir = t;
  fs::create_directories(dir / "allowed");
  fs::create_directories(dir / "private");
  fs::create_directories(dir / "outside");
  for (const char* f : {"allowed/a.bin", "outside/secret"}) {
    int fd = ::open((dir / f).c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ::close(fd);
  }
  bool landlock = probe_sandbox().starts_with("Landlock");
  int bits = in_child([&] {
    SandboxPolicy p;
    p.read = {(dir / "allowed").string()};
    p.read_write = {(dir / "private").string()};
    std::string what;
    try {
      what = enter_sandbox(p);
    } catch (...) {
      return 100;
    }
    int r = 0;
    int fd = ::open((dir / "allowed" / "a.bin").c_str(), O_RDONLY);
    if (fd >= 0) r |= 1, ::close(fd);
    fd = ::open((dir / "outside" / "secret").c_str(), O_RDONLY);
    if (fd < 0 && errno == EACCES) r |= 2;
    if (fd >= 0) ::close(fd);
    fd = ::open((dir / "private" / "out.txt").c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) r |= 4, ::close(fd);
    fd = ::open((dir / "outside" / "new.txt").c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd < 0) r |= 8;
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 && errno == EACCES) r |= 16;
    int u = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (u >= 0) r |= 32, ::close(u);
    if (what.find(landlock ? "Landlock ABI" : "files not confined") != std::string::npos) r |= 64;
    return r;
  });
  ASSERT_NE(bits, 100) << "enter_sandbox threw";
  EXPECT_TRUE(bits & 16) << "a TCP socket was made (bits " << bits << ")";
  EXPECT_TRUE(bits & 32) << "an AF_UNIX socket was refused";
  EXPECT_TRUE(bits & 64) << "the description does not say what confined the child";
  if (landlock) {
    EXPECT_TRUE(bits & 1) << "an allowed file could not be read";
    EXPECT_TRUE(bits & 2) << "a file outside the allowed paths was opened";
    EXPECT_TRUE(bits & 4) << "the private folder could not be written";
    EXPECT_TRUE(bits & 8) << "a file outside was created";
  } else {
    std::cout << "[ note     ] no Landlock on this kernel: files are not confined, only the network\n";
  }
  EXPECT_FALSE(fs::exists(dir / "outside" / "new.txt"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace amanda
