// A temporary database path for the tests that open SQLite files (tests/cpu/db_support.hpp,
// tests/tools/reliability_support.hpp): unique per process and object, cleaned up with its companions.
#pragma once
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>

namespace autotune_test {

/// A unique path "<prefix><pid>_<n>_<tag>" in the temp directory; removes the file and its WAL/SHM/journal
/// companions on construction and destruction. The counter is atomic: objects may be made on several threads.
struct TempDbFile {
  std::string path;

  TempDbFile(const std::string& prefix, const std::string& tag) {
    static std::atomic<int> counter{0};
    path = (std::filesystem::temp_directory_path() /
            (prefix + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + tag))
               .string();
    remove_all();
  }
  ~TempDbFile() { remove_all(); }
  TempDbFile(const TempDbFile&) = delete;
  TempDbFile& operator=(const TempDbFile&) = delete;

  /// Removes the file and its companions; a missing one is no error.
  void remove_all() const {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix, ec);
  }
};

}  // namespace autotune_test
