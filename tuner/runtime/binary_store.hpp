// Internal to tuner/runtime: persistent binaries for the launch API. Reads the tuning database's binary cache
// (filled by `autotune tune`) and a cache directory beside it; stores binaries compiled at run time in the
// database when it is writable, else in the directory. Entries are checked before use (ELF header; the
// directory's files carry their length and an FNV-1a hash), so truncated or damaged ones are recompiled.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/runtime/launch.hpp"

namespace autotune::db {
class Database;
}

namespace autotune::runtime_detail {

class BinaryStore {
 public:
  /// db_path "" = no database. cache_dir "" = "<db_path>.cubin" (none without a database). Never throws.
  BinaryStore(std::string db_path, std::string cache_dir, bool write);
  ~BinaryStore();

  struct Hit {
    std::vector<unsigned char> image;
    BinarySource source = BinarySource::none;
  };
  /// A usable-looking image for key, or nullopt. Damaged entries are skipped and described in *note.
  std::optional<Hit> get(const std::string& key, std::string* note);
  /// Stores an image (replacing a damaged one); returns where it went (none if nowhere: *note says why).
  BinarySource put(const std::string& key, const std::vector<unsigned char>& image, const std::string& log,
                   std::string* note);
  /// Drops a stored entry that failed to load (the database row stays until put() replaces it).
  void forget(const std::string& key);

  const std::string& cache_dir() const { return dir_; }
  const std::string& db_path() const { return db_path_; }

  /// File format of the cache directory (exposed for tests): "ATCUBIN1", u64 size, u64 fnv1a64(image), image.
  static std::vector<unsigned char> encode(const std::vector<unsigned char>& image);
  static std::optional<std::vector<unsigned char>> decode(const std::vector<unsigned char>& file);
  /// True if the image starts like an ELF file (every CUBIN does).
  static bool looks_like_cubin(const std::vector<unsigned char>& image);

 private:
  db::Database* reader();
  db::Database* writer(std::string* note);
  std::string file_of(const std::string& key) const;

  std::string db_path_;
  std::string dir_;
  bool write_ = true;
  std::unique_ptr<db::Database> reader_, writer_;
  bool reader_tried_ = false, writer_tried_ = false;
};

}  // namespace autotune::runtime_detail
