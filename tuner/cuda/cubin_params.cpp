// The ELF of a CUBIN: section headers, the section names, and the per-function .nv.info sections. Layout as the
// toolkit writes it for sm_80 and sm_90 (checked against NVRTC's output in tests/nvrtc/test_cubin_params.cpp):
// an .nv.info record is a format byte, an attribute byte and a 16-bit value; records of format EIFMT_SVAL carry
// that many bytes after it. EIATTR_KPARAM_INFO (0x17) holds one parameter: index (u32), ordinal (u16), offset (u16)
// and a word whose bits 18..31 are the parameter's size in bytes.
#include "tuner/cuda/cubin_params.hpp"

#include <cstdint>
#include <cstring>

namespace autotune::cuda::detail {

namespace {

constexpr unsigned char kFormatSval = 0x04;  // EIFMT_SVAL: a 16-bit size, then that many bytes
constexpr unsigned char kKparamInfo = 0x17;  // EIATTR_KPARAM_INFO
constexpr std::size_t kKparamBytes = 12;
constexpr const char* kInfoPrefix = ".nv.info.";

template <class T>
bool read(const unsigned char* image, std::size_t bytes, std::uint64_t at, T* out) {
  if (at > bytes || sizeof(T) > bytes - at) return false;
  std::memcpy(out, image + at, sizeof(T));
  return true;
}

constexpr std::uint32_t kNoBits = 8;  // SHT_NOBITS: occupies no bytes of the file (.bss, .nv.shared.*)

struct Section {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

/// The records of one .nv.info.<symbol> section: the parameters by ordinal. False when a record runs past the end.
bool read_parameters(const unsigned char* p, std::uint64_t size, std::vector<std::size_t>* out) {
  std::map<std::uint16_t, std::size_t> by_ordinal;
  std::uint64_t at = 0;
  while (at + 4 <= size) {
    const unsigned char format = p[at];
    const unsigned char attribute = p[at + 1];
    std::uint16_t value = 0;
    std::memcpy(&value, p + at + 2, sizeof value);
    at += 4;
    if (format != kFormatSval) continue;
    if (value > size - at) return false;
    if (attribute == kKparamInfo && value >= kKparamBytes) {
      std::uint16_t ordinal = 0;
      std::uint32_t word = 0;
      std::memcpy(&ordinal, p + at + 4, sizeof ordinal);
      std::memcpy(&word, p + at + 8, sizeof word);
      by_ordinal[ordinal] = (word >> 18) & 0x3fffu;
    }
    at += value;
  }
  out->clear();
  for (const auto& [ordinal, bytes] : by_ordinal) {
    if (ordinal != out->size()) return false;  // a gap: not a list this reader understands
    out->push_back(bytes);
  }
  return true;
}

}  // namespace

std::optional<ParameterSizes> cubin_parameter_sizes(const unsigned char* image, std::size_t bytes) {
  static const unsigned char kElf64Le[] = {0x7f, 'E', 'L', 'F', 2, 1};
  if (image == nullptr || bytes < 64 || std::memcmp(image, kElf64Le, sizeof kElf64Le) != 0) return std::nullopt;
  std::uint64_t header_at = 0;
  std::uint16_t entry_size = 0, count = 0, names_index = 0;
  if (!read(image, bytes, 0x28, &header_at) || !read(image, bytes, 0x3A, &entry_size) ||
      !read(image, bytes, 0x3C, &count) || !read(image, bytes, 0x3E, &names_index) || entry_size < 0x28 ||
      names_index >= count)
    return std::nullopt;
  std::vector<Section> sections(count);
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint64_t at = header_at + std::uint64_t{i} * entry_size;
    Section& s = sections[i];
    if (!read(image, bytes, at, &s.name) || !read(image, bytes, at + 4, &s.type) ||
        !read(image, bytes, at + 0x18, &s.offset) || !read(image, bytes, at + 0x20, &s.size))
      return std::nullopt;
    if (s.type != kNoBits && (s.offset > bytes || s.size > bytes - s.offset)) return std::nullopt;
  }
  const Section& names = sections[names_index];
  if (names.type == kNoBits) return std::nullopt;
  ParameterSizes out;
  for (const Section& s : sections) {
    if (s.name >= names.size) return std::nullopt;
    const char* name = reinterpret_cast<const char*>(image + names.offset + s.name);
    const std::size_t room = names.size - s.name;
    const std::size_t length = strnlen(name, room);
    if (length == room) return std::nullopt;  // no terminating NUL inside the name table
    const std::size_t prefix = std::strlen(kInfoPrefix);
    if (s.type == kNoBits || length <= prefix || std::strncmp(name, kInfoPrefix, prefix) != 0) continue;
    std::vector<std::size_t> sizes;
    if (!read_parameters(image + s.offset, s.size, &sizes)) return std::nullopt;
    out.emplace(std::string(name + prefix, length - prefix), std::move(sizes));
  }
  return out;
}

}  // namespace autotune::cuda::detail
