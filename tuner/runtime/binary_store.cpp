#include "tuner/runtime/binary_store.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "db/database.hpp"
#include "tuner/core/hash.hpp"

namespace autotune::runtime_detail {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'A', 'T', 'C', 'U', 'B', 'I', 'N', '1'};
constexpr std::size_t kHeader = sizeof kMagic + 16;

void put_u64(std::vector<unsigned char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::uint64_t image_hash(const std::vector<unsigned char>& image) {
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(image.data()), image.size()));
}

bool writable(const fs::path& p) { return ::access(p.c_str(), W_OK) == 0; }

}  // namespace

BinaryStore::BinaryStore(std::string db_path, std::string cache_dir, bool write)
    : db_path_(std::move(db_path)), dir_(std::move(cache_dir)), write_(write) {
  if (dir_.empty() && !db_path_.empty() && db_path_ != ":memory:") dir_ = db_path_ + ".cubin";
}

BinaryStore::~BinaryStore() = default;

std::vector<unsigned char> BinaryStore::encode(const std::vector<unsigned char>& image) {
  std::vector<unsigned char> out(kMagic, kMagic + sizeof kMagic);
  put_u64(out, image.size());
  put_u64(out, image_hash(image));
  out.insert(out.end(), image.begin(), image.end());
  return out;
}

std::optional<std::vector<unsigned char>> BinaryStore::decode(const std::vector<unsigned char>& file) {
  if (file.size() < kHeader || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  const std::uint64_t size = get_u64(file.data() + sizeof kMagic);
  const std::uint64_t hash = get_u64(file.data() + sizeof kMagic + 8);
  if (size != file.size() - kHeader) return std::nullopt;
  std::vector<unsigned char> image(file.begin() + kHeader, file.end());
  if (image_hash(image) != hash) return std::nullopt;
  return image;
}

bool BinaryStore::looks_like_cubin(const std::vector<unsigned char>& image) {
  return image.size() >= 64 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' && image[3] == 'F';
}

db::Database* BinaryStore::reader() {
  if (!reader_tried_) {
    reader_tried_ = true;
    if (!db_path_.empty()) {
      try {
        reader_ = db::Database::open(db_path_, db::Database::Mode::read_only);
      } catch (const std::exception&) {
        reader_.reset();  // the lookup has already warned about an unusable database
      }
    }
  }
  return reader_.get();
}

db::Database* BinaryStore::writer(std::string* note) {
  if (!writer_tried_) {
    writer_tried_ = true;
    // Only an existing, writable tuning database is written; the launch API never creates one.
    const fs::path p(db_path_);
    std::error_code ec;
    if (!db_path_.empty() && fs::is_regular_file(p, ec) && writable(p) &&
        writable(p.has_parent_path() ? p.parent_path() : fs::path("."))) {
      try {
        writer_ = db::Database::open(db_path_, db::Database::Mode::read_write);
      } catch (const std::exception& e) {
        if (note) *note += std::string(note->empty() ? "" : "; ") + "database not writable: " + e.what();
      }
    }
  }
  return writer_.get();
}

std::string BinaryStore::file_of(const std::string& key) const { return (fs::path(dir_) / (key + ".cubin")).string(); }

std::optional<BinaryStore::Hit> BinaryStore::get(const std::string& key, std::string* note) {
  auto add_note = [&](const std::string& s) {
    if (note) *note += (note->empty() ? "" : "; ") + s;
  };
  if (db::Database* db = reader()) {
    try {
      if (auto row = db->binary(key); row && row->ok) {
        if (looks_like_cubin(row->image)) return Hit{std::move(row->image), BinarySource::database};
        add_note("the database's cached binary " + key + " is damaged (no ELF header): recompiled");
      }
    } catch (const std::exception& e) {
      add_note(std::string("reading the binary cache failed: ") + e.what());
    }
  }
  if (!dir_.empty()) {
    std::ifstream in(file_of(key), std::ios::binary);
    if (in) {
      std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto image = decode(file);
      if (image && looks_like_cubin(*image)) return Hit{std::move(*image), BinarySource::cache_dir};
      add_note("cached binary " + file_of(key) + " is damaged (length or hash mismatch): recompiled");
      std::error_code ec;
      fs::remove(file_of(key), ec);
    }
  }
  return std::nullopt;
}

BinarySource BinaryStore::put(const std::string& key, const std::vector<unsigned char>& image,
                              const std::string& log, std::string* note) {
  if (!write_) return BinarySource::none;
  auto add_note = [&](const std::string& s) {
    if (note) *note += (note->empty() ? "" : "; ") + s;
  };
  if (db::Database* db = writer(note)) {
    try {
      db->put_binary({key, true, log, image});
      return BinarySource::database;
    } catch (const std::exception& e) {
      add_note(std::string("storing the binary in the database failed: ") + e.what());
    }
  }
  if (dir_.empty()) return BinarySource::none;
  std::error_code ec;
  const fs::path dir(dir_);
  // Create the directory only beside something that exists (never a whole tree of parents).
  if (!fs::is_directory(dir, ec)) {
    const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec) || !fs::create_directory(dir, ec)) {
      add_note("binary not stored: cannot create " + dir_);
      return BinarySource::none;
    }
  }
  // Write to a temporary file, then rename: readers never see a half-written entry.
  const std::string final_path = file_of(key);
  const std::string tmp = final_path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const auto bytes = encode(image);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      fs::remove(tmp, ec);
      add_note("binary not stored: cannot write " + tmp);
      return BinarySource::none;
    }
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    add_note("binary not stored: cannot rename into " + final_path);
    return BinarySource::none;
  }
  return BinarySource::cache_dir;
}

void BinaryStore::forget(const std::string& key) {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove(file_of(key), ec);
}

}  // namespace autotune::runtime_detail
