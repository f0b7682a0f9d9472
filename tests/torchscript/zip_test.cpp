// The zip reader on archives assembled here (stored, deflated, Zip64, with a comment), on broken
// ones (every truncation, offsets and sizes out of range, corrupt deflate data, random byte
// changes), and on real TorchScript archives (the fuzz corpus's, and AMANDA_TEST_PT's).
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "frameworks/torchscript/pickle.h"
#include "frameworks/torchscript/zip.h"

using namespace amanda;
using namespace amanda::torchscript;

namespace {

void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>(v >> 8 & 0xff);
}
void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}
void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v));
  put32(s, static_cast<uint32_t>(v >> 32));
}
void set32(std::string& s, size_t at, uint32_t v) {
  for (int k = 0; k < 4; ++k) s[at + k] = static_cast<char>(v >> (8 * k) & 0xff);
}

std::string raw_deflate(const std::string& in) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct In {
  std::string name;
  std::string data;
  bool deflate = false;
  std::string local_extra;  // padding in the local header only, as torch.jit.save writes
};

// Where the writer put things, for tests that break them.
struct Layout {
  std::vector<size_t> central;  // offset of each central directory entry
  size_t deflated_data = 0;     // offset of the last deflated entry's bytes
};

// A zip archive as zip tools write it. zip64: a Zip64 end record and locator, with the classic
// end record's counts and offsets and the central entries' sizes and offsets saturated, so that
// only the Zip64 values are right.
std::string make_zip(const std::vector<In>& entries, bool zip64 = false, const std::string& comment = "",
                     Layout* layout = nullptr) {
  std::string z, cd;
  for (auto& e : entries) {
    std::string body = e.deflate ? raw_deflate(e.data) : e.data;
    uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    uint32_t local = static_cast<uint32_t>(z.size());
    put32(z, 0x04034b50);
    put16(z, 20);
    put16(z, 0);
    put16(z, e.deflate ? 8 : 0);
    put32(z, 0);  // time, date
    put32(z, crc);
    put32(z, static_cast<uint32_t>(body.size()));
    put32(z, static_cast<uint32_t>(e.data.size()));
    put16(z, static_cast<uint32_t>(e.name.size()));
    put16(z, static_cast<uint32_t>(e.local_extra.size()));
    z += e.name + e.local_extra;
    if (e.deflate && layout) layout->deflated_data = z.size();
    z += body;

    if (layout) layout->central.push_back(cd.size());
    std::string extra;
    if (zip64) {
      put16(extra, 0x0001);
      put16(extra, 24);
      put64(extra, e.data.size());
      put64(extra, body.size());
      put64(extra, local);
    }
    put32(cd, 0x02014b50);
    put16(cd, 45);
    put16(cd, 45);
    put16(cd, 0);
    put16(cd, e.deflate ? 8 : 0);
    put32(cd, 0);
    put32(cd, crc);
    put32(cd, zip64 ? 0xffffffff : static_cast<uint32_t>(body.size()));
    put32(cd, zip64 ? 0xffffffff : static_cast<uint32_t>(e.data.size()));
    put16(cd, static_cast<uint32_t>(e.name.size()));
    put16(cd, static_cast<uint32_t>(extra.size()));
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk
    put16(cd, 0);  // internal attributes
    put32(cd, 0);  // external attributes
    put32(cd, zip64 ? 0xffffffff : local);
    cd += e.name + extra;
  }
  if (layout)
    for (auto& c : layout->central) c += z.size();
  uint64_t cd_offset = z.size();
  z += cd;
  if (zip64) {
    uint64_t rec = z.size();
    put32(z, 0x06064b50);
    put64(z, 44);
    put16(z, 45);
    put16(z, 45);
    put32(z, 0);
    put32(z, 0);
    put64(z, entries.size());
    put64(z, entries.size());
    put64(z, cd.size());
    put64(z, cd_offset);
    put32(z, 0x07064b50);
    put32(z, 0);
    put64(z, rec);
    put32(z, 1);
  }
  put32(z, 0x06054b50);
  put16(z, 0);
  put16(z, 0);
  put16(z, zip64 ? 0xffff : static_cast<uint32_t>(entries.size()));
  put16(z, zip64 ? 0xffff : static_cast<uint32_t>(entries.size()));
  put32(z, zip64 ? 0xffffffff : static_cast<uint32_t>(cd.size()));
  put32(z, zip64 ? 0xffffffff : static_cast<uint32_t>(cd_offset));
  put16(z, static_cast<uint32_t>(comment.size()));
  z += comment;
  return z;
}

std::string text(size_t n, unsigned seed) {
  std::string s;
  std::mt19937 rng(seed);
  static const char* words[] = {"tensor ", "graph ", "node ", "value ", "(x) ", "-> ", "\n"};
  while (s.size() < n) s += words[rng() % 7];
  s.resize(n);
  return s;
}

std::vector<In> sample() {
  return {{"m/version", "3\n", false, ""},
          {"m/data/0", std::string("\x01\x02\x03\x00\xff", 5), false, std::string(13, 'Z')},
          {"m/code/__torch__/m.py", text(5000, 1), true, ""},
          {"m/data.pkl", "\x80\x02N.", false, ""}};
}

std::string error_of(const std::string& bytes) {
  try {
    ZipArchive z(make_buffer(bytes), "t.pt");
    for (auto& e : z.entries()) z.data(e);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Opens and reads every entry; must end in success or amanda::Error, nothing else.
void open_or_error(const std::string& bytes) {
  try {
    ZipArchive z(make_buffer(bytes), "t.pt");
    for (auto& e : z.entries()) z.data(e);
  } catch (const Error&) {
  }
}

TEST(Zip, StoredAndDeflatedEntries) {
  auto in = sample();
  ZipArchive z(make_buffer(make_zip(in)), "t.pt");
  ASSERT_EQ(z.entries().size(), 4u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(z.entries()[i].name, in[i].name);
    EXPECT_EQ(z.read(in[i].name), in[i].data) << in[i].name;
  }
  EXPECT_EQ(z.path(), "t.pt");
  EXPECT_EQ(z.find("m/nothing"), nullptr);
  EXPECT_EQ(z.find("m/data"), nullptr);  // a prefix of a name is not a name
}

TEST(Zip, StoredEntriesAreSlicesOfTheBuffer) {
  ZipArchive z(make_buffer(make_zip(sample())), "t.pt");
  const ZipEntry* e = z.find("m/data/0");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(z.borrowable(*e));
  auto d = z.data(*e);
  const char* base = reinterpret_cast<const char*>(z.buffer()->data());
  EXPECT_EQ(d.data(), base + e->data_offset);
  // The data starts after the LOCAL header's 13 bytes of extra padding (the central entry has none).
  EXPECT_EQ(z.buffer()->view().substr(e->data_offset - 13 - e->name.size(), e->name.size()), e->name);
}

TEST(Zip, DeflatedEntryIsInflatedOnceAndChecked) {
  ZipArchive z(make_buffer(make_zip(sample())), "t.pt");
  const ZipEntry* e = z.find("m/code/__torch__/m.py");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->method, 8);
  EXPECT_FALSE(z.borrowable(*e));
  EXPECT_LT(e->compressed_size, e->size);
  auto a = z.data(*e), b = z.data(*e);
  EXPECT_EQ(a, text(5000, 1));
  EXPECT_EQ(a.data(), b.data());  // cached, not inflated again
  ZipEntry copy = *e;              // a copy of an entry finds the same bytes
  EXPECT_EQ(z.data(copy).data(), a.data());
}

TEST(Zip, Zip64RecordsAndExtraFields) {
  auto in = sample();
  ZipArchive z(make_buffer(make_zip(in, true)), "t.pt");
  ASSERT_EQ(z.entries().size(), in.size());
  for (auto& e : in) EXPECT_EQ(z.read(e.name), e.data) << e.name;
}

TEST(Zip, ArchiveComment) {
  auto in = sample();
  // A comment that contains an end record signature must not be taken for the record.
  std::string comment = "made by hand PK\x05\x06 end";
  ZipArchive z(make_buffer(make_zip(in, false, comment)), "t.pt");
  EXPECT_EQ(z.read("m/version"), "3\n");
}

TEST(Zip, EmptyArchive) {
  ZipArchive z(make_buffer(make_zip({})), "t.pt");
  EXPECT_TRUE(z.entries().empty());
  try {
    z.read("x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.pt: no entry x in the archive");
  }
}

TEST(ZipBad, EmptyAndGarbage) {
  EXPECT_NE(error_of("").find("t.pt: zip: byte 0: the file is too short"), std::string::npos) << error_of("");
  EXPECT_NE(error_of(std::string(1000, 'x')).find("no end of central directory record"), std::string::npos);
}

TEST(ZipBad, EveryTruncationFails) {
  for (bool zip64 : {false, true}) {
    auto z = make_zip(sample(), zip64);
    for (size_t n = 0; n < z.size(); ++n) {
      // Every prefix loses the end record at least, and must be refused.
      EXPECT_NE(error_of(z.substr(0, n)), "") << "prefix " << n << (zip64 ? " zip64" : "");
    }
  }
}

TEST(ZipBad, EntryPointsPastTheEnd) {
  Layout l;
  auto z = make_zip(sample(), false, "", &l);
  set32(z, l.central[2] + 42, 0x7ffffff0);  // local header offset
  EXPECT_NE(error_of(z).find("t.pt: zip: byte 2147483632: central directory entry 2 points past the end of the file"),
            std::string::npos)
      << error_of(z);
}

TEST(ZipBad, SizePastTheEnd) {
  Layout l;
  auto z = make_zip(sample(), false, "", &l);
  set32(z, l.central[1] + 20, 0xfffffff0);  // compressed size
  set32(z, l.central[1] + 24, 0xfffffff0);  // size
  EXPECT_NE(error_of(z).find("entry m/data/0: its 4294967280 bytes"), std::string::npos) << error_of(z);
}

TEST(ZipBad, Zip64SizesPastTheEnd) {
  Layout l;
  auto z = make_zip(sample(), true, "", &l);
  // The Zip64 extra field follows the 46-byte header and the name: size, compressed size, offset.
  size_t extra = l.central[1] + 46 + std::strlen("m/data/0") + 4;
  for (int k = 0; k < 8; ++k) z[extra + k] = z[extra + 8 + k] = '\xff';
  EXPECT_NE(error_of(z).find("run past the end of the file"), std::string::npos) << error_of(z);
}

TEST(ZipBad, CentralDirectoryPastTheEnd) {
  auto z = make_zip(sample());
  set32(z, z.size() - 6, 0xffff0000);  // the end record's directory offset
  EXPECT_NE(error_of(z).find("does not lie before the end records"), std::string::npos) << error_of(z);
}

TEST(ZipBad, TooManyEntriesForTheDirectory) {
  auto z = make_zip(sample());
  z[z.size() - 12] = z[z.size() - 14] = '\x60';  // 0x60 entries instead of 4 (both counts)
  EXPECT_NE(error_of(z).find("entries cannot fit"), std::string::npos) << error_of(z);
}

TEST(ZipBad, StoredSizesDisagree) {
  Layout l;
  auto z = make_zip(sample(), false, "", &l);
  set32(z, l.central[0] + 24, 1);  // size 1, compressed size 2
  EXPECT_NE(error_of(z).find("is stored but its compressed size 2 differs from its size 1"), std::string::npos)
      << error_of(z);
}

TEST(ZipBad, LocalHeaderNamesAnotherEntry) {
  auto z = make_zip(sample());
  auto at = z.find("m/version");  // the first local header's name
  z[at] = 'x';
  EXPECT_NE(error_of(z).find("the local header names another entry"), std::string::npos) << error_of(z);
}

TEST(ZipBad, DuplicateNames) {
  EXPECT_NE(error_of(make_zip({{"a", "1", false, ""}, {"a", "2", false, ""}})).find("two entries are named a"), std::string::npos);
}

TEST(ZipBad, CorruptDeflateData) {
  Layout l;
  auto good = make_zip(sample(), false, "", &l);
  auto z = good;
  for (size_t k = 0; k < 40; ++k) z[l.deflated_data + 10 + k] ^= 0x5a;
  ZipArchive a(make_buffer(z), "t.pt");
  EXPECT_THROW(a.read("m/code/__torch__/m.py"), Error);
  EXPECT_EQ(a.read("m/version"), "3\n");  // the other entries are still readable

  z = good;
  set32(z, l.central[2] + 16, 0x12345678);  // CRC
  ZipArchive b(make_buffer(z), "t.pt");
  try {
    b.read("m/code/__torch__/m.py");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry m/code/__torch__/m.py: CRC mismatch"), std::string::npos) << e.what();
  }
}

TEST(ZipBad, DeflatedSizeWrong) {
  Layout l;
  auto good = make_zip(sample(), false, "", &l);
  auto z = good;
  set32(z, l.central[2] + 24, 4000);  // the stream inflates to 5000
  EXPECT_NE(error_of(z).find("inflates to more than its size of 4000 bytes"), std::string::npos) << error_of(z);
  z = good;
  set32(z, l.central[2] + 24, 4999);
  EXPECT_NE(error_of(z).find("inflates to 5000 bytes, not its size of 4999"), std::string::npos) << error_of(z);
  z = good;
  set32(z, l.central[2] + 24, 5001);
  EXPECT_NE(error_of(z).find("inflates to 5000 bytes, not its size of 5001"), std::string::npos) << error_of(z);
  z = good;
  set32(z, l.central[2] + 24, 0xfffffffe);  // cannot come from so few bytes: refused before allocating
  EXPECT_NE(error_of(z).find("is more than"), std::string::npos) << error_of(z);
}

TEST(ZipBad, UnknownMethod) {
  Layout l;
  auto z = make_zip(sample(), false, "", &l);
  z[l.central[3] + 10] = 12;  // bzip2
  ZipArchive a(make_buffer(z), "t.pt");
  EXPECT_FALSE(a.borrowable(*a.find("m/data.pkl")));
  try {
    a.read("m/data.pkl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported compression method 12"), std::string::npos) << e.what();
  }
}

TEST(ZipBad, RandomByteChanges) {
  for (bool zip64 : {false, true}) {
    auto good = make_zip(sample(), zip64);
    std::mt19937 rng(7);
    for (int round = 0; round < 3000; ++round) {
      auto z = good;
      int changes = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < changes; ++k) z[rng() % z.size()] = static_cast<char>(rng());
      open_or_error(z);
    }
  }
}

bool fits_in(const ZipEntry& e, const ZipArchive& z) {
  return e.data_offset <= z.buffer()->size() && e.compressed_size <= z.buffer()->size() - e.data_offset;
}

// Archives made by torch.jit.save: the fuzz corpus's two (fuzz/make_torchscript_seeds.py: a traced
// CNN and a scripted module; the first byte of a seed picks the reader), and AMANDA_TEST_PT when it
// names another .pt file.
void check_real_archive(std::shared_ptr<const Buffer> bytes, const std::string& path) {
  ZipArchive z(std::move(bytes), path);
  const ZipEntry* data = nullptr;
  for (auto& e : z.entries()) {
    EXPECT_TRUE(fits_in(e, z)) << e.name;
    if (e.name.size() > 9 && e.name.compare(e.name.size() - 9, 9, "/data.pkl") == 0) data = &e;
  }
  ASSERT_NE(data, nullptr) << "no */data.pkl";
  std::string prefix = data->name.substr(0, data->name.size() - 8);
  EXPECT_TRUE(z.find(prefix + "version") || z.find(prefix + ".data/version"));
  auto starts = [](const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; };
  auto ends = [](const std::string& s, const std::string& p) {
    return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  for (auto& e : z.entries()) {
    // torch.jit.save stores tensor data uncompressed and 64-byte aligned (code may be deflated).
    if (starts(e.name, prefix + "data/") || starts(e.name, prefix + "constants/")) {
      EXPECT_TRUE(z.borrowable(e)) << e.name;
      EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    } else {
      EXPECT_EQ(z.data(e).size(), e.size) << e.name;  // inflated and CRC-checked when deflated
    }
    if (ends(e.name, ".pkl") || ends(e.name, ".debug_pkl")) {
      try {
        unpickle(z.data(e), e.name);
      } catch (const Error& x) {
        ADD_FAILURE() << x.what();
      }
    }
  }
  // The module object: a NEWOBJ of a __torch__ class with a BUILD state.
  PyRef root = unpickle(z.data(*data), path + std::string(":") + data->name);
  ASSERT_EQ(root->kind, PyObject::Kind::Call) << describe(*root);
  EXPECT_TRUE(root->new_object);
  EXPECT_EQ(root->items[0]->str.rfind("__torch__.", 0), 0u) << describe(*root);
  ASSERT_NE(root->state, nullptr);
  dismantle(std::move(root));
}

TEST(Zip, RealArchive) {
  std::string corpus = std::string(AMANDA_TEST_DATA) + "/../fuzz/corpus/torchscript/";
  for (const char* seed : {"archive_traced_cnn", "archive_scripted"}) {
    SCOPED_TRACE(seed);
    std::string bytes(map_file(corpus + seed)->view());
    check_real_archive(make_buffer(bytes.substr(1)), seed);
  }
  if (const char* path = std::getenv("AMANDA_TEST_PT"); path && *path) {
    SCOPED_TRACE(path);
    check_real_archive(map_file(path), path);
  }
}

}  // namespace
