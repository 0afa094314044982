#include "tuner/core/data_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/memory_arrays.hpp"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "array files are read into little-endian memory");

namespace autotune {

namespace {

constexpr unsigned char kNpyMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kNpyPrefix = 8;  // magic + version bytes
/// Largest header accepted: real headers are under 200 bytes; a bigger one is a corrupt length field.
constexpr std::uint64_t kMaxNpyHeader = std::uint64_t{1} << 20;

/// The project's dtype names with their npy kind and size (the byte order comes first in a descr).
struct DtypeCode {
  const char* dtype;
  char kind;  // 'i', 'u', 'f'
  int size;
};
constexpr DtypeCode kDtypeCodes[] = {
    {"int8", 'i', 1},    {"uint8", 'u', 1},   {"int16", 'i', 2},   {"uint16", 'u', 2},
    {"int32", 'i', 4},   {"uint32", 'u', 4},  {"int64", 'i', 8},   {"uint64", 'u', 8},
    {"float16", 'f', 2}, {"float32", 'f', 4}, {"float64", 'f', 8},
};

std::string file_text(const std::string& path) {
  return is_memory_path(path) ? memory_array_text(path) : "file '" + path + "'";
}

std::string errno_text(int e) { return std::strerror(e); }

/// Closes a descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

/// Unmaps on scope exit.
struct Mapping {
  void* addr = MAP_FAILED;
  std::size_t bytes = 0;
  ~Mapping() {
    if (addr != MAP_FAILED) ::munmap(addr, bytes);
  }
};

/// A small parser of the Python dictionary literal of a .npy header.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  void parse(NpyHeader& h) {
    bool descr = false, order = false, shape = false;
    skip();
    expect('{');
    while (true) {
      skip();
      if (peek() == '}') break;
      const std::string key = string_literal();
      skip();
      expect(':');
      skip();
      if (key == "descr") {
        if (peek() == '[') fail("structured dtypes (a list in 'descr') are not supported");
        h.descr = string_literal();
        descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        shape = true;
      } else {
        fail("unknown key '" + key + "' in the header");
      }
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' at offset " + std::to_string(i_) + " of the header");
    }
    ++i_;
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\0')) ++i_;
    if (i_ != s_.size()) fail("unexpected text after the header's dictionary");
    if (!descr || !order || !shape) fail("the header lacks 'descr', 'fortran_order' or 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(file_text(file_) + " has a malformed .npy header: " + why);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string at offset " + std::to_string(i_));
    const std::size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }
  std::vector<std::uint64_t> tuple() {
    std::vector<std::uint64_t> out;
    expect('(');
    while (true) {
      skip();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("a shape holds non-negative integers");
      std::uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const auto d = static_cast<std::uint64_t>(s_[i_++] - '0');
        if (v > (UINT64_MAX - d) / 10) fail("a shape dimension does not fit in 64 bits");
        v = v * 10 + d;
      }
      if (peek() == 'L') ++i_;  // written by Python 2
      out.push_back(v);
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++i_;
    return out;
  }

  const std::string& s_;
  const std::string& file_;
  std::size_t i_ = 0;
};

/// Fills h.dtype and h.big_endian from h.descr.
void decode_descr(NpyHeader& h, const std::string& file) {
  std::string d = h.descr;
  char order = '=';
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
    order = d[0];
    d = d.substr(1);
  }
  const std::string why = file_text(file) + " holds elements of dtype '" + h.descr + "'";
  if (d.size() < 2 ||
      !std::all_of(d.begin() + 1, d.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    throw UsageError(why + ", which this reader does not support");
  const char kind = d[0];
  const int size = std::atoi(d.c_str() + 1);
  if (kind == 'b') throw UsageError(why + " (bool): store it as uint8 (numpy: a.astype(np.uint8))");
  if (kind == 'c') throw UsageError(why + " (complex): store real and imaginary parts as a float array");
  for (const DtypeCode& c : kDtypeCodes)
    if (c.kind == kind && c.size == size) {
      h.dtype = c.dtype;
      h.big_endian = order == '>' && size > 1;
      return;
    }
  throw UsageError(why +
                   ", which this reader does not support (supported: int8 to int64, uint8 to uint64, "
                   "float16, float32, float64)");
}

std::uint32_t read_le(const unsigned char* p, int bytes) {
  std::uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// Bytes of the prefix, length field included, and the header length it announces; nullopt if `size` bytes are
/// too few to tell. Checks the magic and the version.
std::optional<std::pair<std::size_t, std::uint64_t>> npy_lengths(const unsigned char* bytes, std::size_t size,
                                                                 const std::string& file) {
  if (std::memcmp(bytes, kNpyMagic, std::min(size, sizeof kNpyMagic)) != 0)
    throw UsageError(file_text(file) +
                     " is not a .npy file (it does not start with \\x93NUMPY); for raw binary "
                     "data give \"format\": \"raw\"");
  if (size < kNpyPrefix) return std::nullopt;
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw UsageError(file_text(file) + " is a .npy file of format version " + std::to_string(major) + "." +
                     std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const std::size_t field = major == 1 ? 2 : 4;
  if (size < kNpyPrefix + field) return std::nullopt;
  const std::uint64_t header = read_le(bytes + kNpyPrefix, static_cast<int>(field));
  if (header > kMaxNpyHeader)
    throw UsageError(file_text(file) + " announces a .npy header of " + std::to_string(header) +
                     " bytes: the file is corrupt");
  return std::make_pair(kNpyPrefix + field, header);
}

std::string dtype_text(const NpyHeader& h) { return h.descr + " (" + h.dtype + ")"; }

/// The checks of a .npy header against the reader and the file's size (`file_bytes`, nullopt: unknown).
void check_header(const ArrayFileRequest& r, const NpyHeader& h, std::optional<std::uint64_t> file_bytes) {
  if (h.dtype != r.dtype)
    throw UsageError(r.what + " is " + r.dtype + " but " + file_text(r.path) + " holds " + dtype_text(h) + " elements");
  if (!file_bytes) return;
  const std::uint64_t data = h.elements() * static_cast<std::uint64_t>(dtype_size(h.dtype));
  const std::uint64_t after = *file_bytes - std::min<std::uint64_t>(*file_bytes, h.data_offset);
  if (after != data)
    throw UsageError(r.what + ": " + file_text(r.path) + " is " +
                     (after < data ? "truncated" : "longer than its header says") + ": its header says shape " +
                     h.shape_text() + " of " + h.descr + " = " + std::to_string(data) +
                     " bytes of data, the file has " + std::to_string(after) + " after its " +
                     std::to_string(h.data_offset) + "-byte header");
}

/// The element count of a raw file of `bytes` bytes.
std::uint64_t raw_elements(const ArrayFileRequest& r, std::uint64_t bytes) {
  const auto es = static_cast<std::uint64_t>(dtype_size(r.dtype));
  if (bytes % es != 0)
    throw UsageError(r.what + ": " + file_text(r.path) + " has " + std::to_string(bytes) +
                     " bytes, not a whole number of " + r.dtype + " elements (" + std::to_string(es) + " bytes each)");
  return bytes / es;
}

/// Reads exactly `bytes` bytes (fewer only at the end of the file); returns how many were read.
std::size_t read_full(int fd, unsigned char* dst, std::size_t bytes, const ArrayFileRequest& r) {
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::read(fd, dst + done, std::min<std::size_t>(bytes - done, std::size_t{1} << 30));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw UsageError(r.what + ": reading " + file_text(r.path) + " failed: " + errno_text(errno));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

/// Swaps each element of es bytes in place (big-endian data into memory).
void swap_elements(unsigned char* p, std::size_t bytes, std::size_t es) {
  for (std::size_t i = 0; i + es <= bytes; i += es) std::reverse(p + i, p + i + es);
}

int open_for(const ArrayFileRequest& r) {
  int fd;
  do {
    fd = ::open(r.path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw UsageError(r.what + ": cannot open " + file_text(r.path) + ": " + errno_text(errno));
  return fd;
}

/// Reads the whole header of a regular file with pread.
NpyHeader pread_header(int fd, const ArrayFileRequest& r, std::uint64_t file_bytes) {
  unsigned char prefix[12] = {};
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, sizeof prefix));
  if (::pread(fd, prefix, want, 0) != static_cast<ssize_t>(want))
    throw UsageError(r.what + ": reading " + file_text(r.path) + " failed: " + errno_text(errno));
  const auto lengths = npy_lengths(prefix, want, r.path);
  if (!lengths || lengths->first + lengths->second > file_bytes)
    throw UsageError(r.what + ": " + file_text(r.path) + " is too short for its .npy header");
  std::vector<unsigned char> all(lengths->first + static_cast<std::size_t>(lengths->second));
  if (::pread(fd, all.data(), all.size(), 0) != static_cast<ssize_t>(all.size()))
    throw UsageError(r.what + ": reading " + file_text(r.path) + " failed: " + errno_text(errno));
  return parse_npy_header(all.data(), all.size(), r.path);
}

/// Messages of the reader name what reads the file: a UsageError of the file alone gets r.what in front.
template <typename F>
auto naming_reader(const ArrayFileRequest& r, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    if (msg.rfind(r.what, 0) == 0) throw;
    throw UsageError(r.what + ": " + msg);
  }
}

/// Elements the file holds (npy: after check_header; raw: its size in elements).
std::uint64_t checked_elements(const ArrayFileRequest& r, const std::optional<NpyHeader>& h, std::uint64_t file_bytes) {
  if (h) {
    check_header(r, *h, file_bytes);
    return h->elements();
  }
  return raw_elements(r, file_bytes);
}

std::string count_mismatch(const ArrayFileRequest& r, std::uint64_t count, const std::string& has) {
  return r.what + " needs " + std::to_string(count) + (count == 1 ? " element of " : " elements of ") + r.dtype + " (" +
         std::to_string(count * static_cast<std::uint64_t>(dtype_size(r.dtype))) + " bytes) but " + file_text(r.path) +
         " " + has;
}

/// The mmap path: nullopt when the file cannot be mapped.
std::optional<ReadMethod> read_mapped(int fd, const struct stat& st, const ArrayFileRequest& r, std::uint64_t count,
                                      std::vector<unsigned char>& out) {
  const auto size = static_cast<std::size_t>(st.st_size);
  Mapping m;
  m.addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m.addr == MAP_FAILED) return std::nullopt;
  m.bytes = size;
  ::madvise(m.addr, size, MADV_SEQUENTIAL);
  const auto* base = static_cast<const unsigned char*>(m.addr);
  std::optional<NpyHeader> h;
  if (r.format == DataFormat::npy) h = parse_npy_header(base, size, r.path);
  const std::uint64_t elements = checked_elements(r, h, size);
  if (elements != count) {
    throw UsageError(count_mismatch(r, count,
                                    h ? "has shape " + h->shape_text() + " = " + std::to_string(elements) + " elements"
                                      : "has " + std::to_string(size) + " bytes"));
  }
  const std::size_t offset = h ? h->data_offset : 0;
  const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(dtype_size(r.dtype));
  out.resize(bytes);
  if (bytes) std::memcpy(out.data(), base + offset, bytes);
  struct stat after {};
  if (::fstat(fd, &after) != 0 || after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
      after.st_mtim.tv_nsec != st.st_mtim.tv_nsec)
    throw UsageError(r.what + ": " + file_text(r.path) +
                     " changed while it was read; read it again when it is complete");
  if (h && h->big_endian) swap_elements(out.data(), bytes, static_cast<std::size_t>(dtype_size(r.dtype)));
  return ReadMethod::mapped;
}

/// The read() path, for pipes and files that cannot be mapped: the header, then the data straight into out.
ReadMethod read_streamed(int fd, const ArrayFileRequest& r, std::uint64_t count, std::vector<unsigned char>& out) {
  std::optional<NpyHeader> h;
  if (r.format == DataFormat::npy) {
    std::vector<unsigned char> head(kNpyPrefix + 4);
    std::size_t have = read_full(fd, head.data(), kNpyPrefix + 2, r);
    auto lengths = npy_lengths(head.data(), have, r.path);
    if (!lengths && have == kNpyPrefix + 2) {  // version 2.0 or 3.0: a 4-byte length field
      have += read_full(fd, head.data() + have, 2, r);
      lengths = npy_lengths(head.data(), have, r.path);
    }
    if (!lengths) throw UsageError(r.what + ": " + file_text(r.path) + " is too short for a .npy header");
    head.resize(lengths->first + static_cast<std::size_t>(lengths->second));
    if (read_full(fd, head.data() + have, head.size() - have, r) != head.size() - have)
      throw UsageError(r.what + ": " + file_text(r.path) + " is too short for its .npy header");
    h = parse_npy_header(head.data(), head.size(), r.path);
    check_header(r, *h, std::nullopt);
    if (h->elements() != count)
      throw UsageError(count_mismatch(
          r, count, "has shape " + h->shape_text() + " = " + std::to_string(h->elements()) + " elements"));
  }
  const std::size_t bytes = static_cast<std::size_t>(count) * static_cast<std::size_t>(dtype_size(r.dtype));
  out.resize(bytes);
  const std::size_t got = read_full(fd, out.data(), bytes, r);
  unsigned char extra = 0;
  const bool more = got == bytes && read_full(fd, &extra, 1, r) == 1;
  if (got != bytes || more) {
    const std::string has = got < bytes ? "ends after " + std::to_string(got) + " bytes of data"
                                        : "holds more than " + std::to_string(bytes) + " bytes of data";
    throw UsageError(count_mismatch(r, count, has));
  }
  if (h && h->big_endian) swap_elements(out.data(), bytes, static_cast<std::size_t>(dtype_size(r.dtype)));
  return ReadMethod::streamed;
}

/// The in-memory array a "memory:NAME" request reads, checked to hold r.dtype.
std::shared_ptr<const MemoryArray> memory_array_for(const ArrayFileRequest& r) {
  std::shared_ptr<const MemoryArray> a = find_memory_array(r.path, r.what);
  if (a->dtype != r.dtype)
    throw UsageError(r.what + ": " + memory_array_text(r.path) + " holds " + a->dtype + ", the reader needs " +
                     r.dtype);
  return a;
}

}  // namespace

const char* to_string(DataFormat f) { return f == DataFormat::npy ? "npy" : "raw"; }

std::optional<DataFormat> parse_data_format(const std::string& text) {
  if (text == "npy") return DataFormat::npy;
  if (text == "raw") return DataFormat::raw;
  return std::nullopt;
}

std::optional<DataFormat> data_format_from_path(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return std::nullopt;
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "npy") return DataFormat::npy;
  if (ext == "bin" || ext == "raw") return DataFormat::raw;
  return std::nullopt;
}

std::uint64_t NpyHeader::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;  // overflow ruled out by parse_npy_header
  return n;
}

std::string NpyHeader::shape_text() const {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

NpyHeader parse_npy_header(const unsigned char* bytes, std::size_t size, const std::string& file) {
  const auto lengths = npy_lengths(bytes, size, file);
  if (!lengths || lengths->first + lengths->second > size)
    throw UsageError(file_text(file) + " is too short for its .npy header");
  NpyHeader h;
  h.major = bytes[6];
  h.minor = bytes[7];
  h.data_offset = lengths->first + static_cast<std::size_t>(lengths->second);
  const std::string text(reinterpret_cast<const char*>(bytes + lengths->first),
                         static_cast<std::size_t>(lengths->second));
  HeaderParser(text, file).parse(h);
  decode_descr(h, file);
  if (h.fortran_order && h.shape.size() > 1)
    throw UsageError(file_text(file) + " is in Fortran (column-major) order with shape " + h.shape_text() +
                     ": save it in C order (numpy: np.save(f, np.ascontiguousarray(a)))");
  std::uint64_t n = 1;
  const auto es = static_cast<std::uint64_t>(dtype_size(h.dtype));
  for (std::uint64_t d : h.shape)
    if (__builtin_mul_overflow(n, d, &n) || (d != 0 && n > UINT64_MAX / es))
      throw UsageError(file_text(file) + " has shape " + h.shape_text() + ", too many elements");
  return h;
}

std::string npy_descr(const std::string& dtype) {
  for (const DtypeCode& c : kDtypeCodes)
    if (dtype == c.dtype) return std::string(c.size == 1 ? "|" : "<") + c.kind + std::to_string(c.size);
  throw UsageError(".npy files hold no elements of dtype '" + dtype + "'");
}

void write_npy(const std::string& path, const std::string& dtype, const std::vector<std::uint64_t>& shape,
               const std::vector<unsigned char>& bytes) {
  NpyHeader h;
  h.shape = shape;
  h.descr = npy_descr(dtype);
  const std::uint64_t want = h.elements() * static_cast<std::uint64_t>(dtype_size(dtype));
  if (want != bytes.size())
    throw UsageError("write_npy " + path + ": shape " + h.shape_text() + " of " + dtype + " is " +
                     std::to_string(want) + " bytes, the data " + std::to_string(bytes.size()));
  std::string header = "{'descr': '" + h.descr + "', 'fortran_order': False, 'shape': " + h.shape_text() + ", }";
  const std::size_t unpadded = 10 + header.size() + 1;  // prefix, length field, header, '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xffff) throw UsageError("write_npy " + path + ": shape " + h.shape_text() + " is too long");
  std::string out(kNpyMagic, kNpyMagic + sizeof kNpyMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw EnvironmentError("cannot write " + file_text(path));
}

void write_raw(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw EnvironmentError("cannot write " + file_text(path));
}

NpyArray read_npy(const std::string& path) {
  Fd fd;
  ArrayFileRequest r;
  r.path = path;
  r.what = "reading " + path;
  fd.fd = open_for(r);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) throw UsageError(file_text(path) + " is not a regular file");
  const NpyHeader h = pread_header(fd.fd, r, static_cast<std::uint64_t>(st.st_size));
  r.dtype = h.dtype;
  NpyArray a;
  a.dtype = h.dtype;
  a.shape = h.shape;
  read_array_file(r, h.elements(), a.bytes);
  return a;
}

ArrayFileInfo probe_array_file(const ArrayFileRequest& r) {
  return naming_reader(r, [&] {
    const auto es = static_cast<std::uint64_t>(dtype_size(r.dtype));
    ArrayFileInfo info;
    if (is_memory_path(r.path)) {
      const std::shared_ptr<const MemoryArray> a = memory_array_for(r);
      info.file_bytes = a->bytes;
      info.elements = a->bytes / es;
      return info;
    }
    struct stat st {};
    if (::stat(r.path.c_str(), &st) != 0)
      throw UsageError(r.what + ": cannot open " + file_text(r.path) + ": " + errno_text(errno));
    if (!S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) throw UsageError(r.what + ": " + file_text(r.path) + " is a directory");
      return info;  // a pipe or device: checked when it is read
    }
    Fd fd;
    fd.fd = open_for(r);
    info.file_bytes = static_cast<std::uint64_t>(st.st_size);
    if (r.format == DataFormat::npy) info.header = pread_header(fd.fd, r, info.file_bytes);
    info.elements = checked_elements(r, info.header, info.file_bytes);
    return info;
  });
}

void check_array_count(const ArrayFileRequest& r, const ArrayFileInfo& info, std::uint64_t count) {
  if (!info.elements || *info.elements == count) return;
  throw UsageError(count_mismatch(
      r, count,
      info.header ? "has shape " + info.header->shape_text() + " = " + std::to_string(*info.elements) + " elements"
                  : "has " + std::to_string(info.file_bytes) + " bytes"));
}

ReadMethod read_array_file(const ArrayFileRequest& r, std::uint64_t count, std::vector<unsigned char>& out) {
  return naming_reader(r, [&] {
    const auto es = static_cast<std::uint64_t>(dtype_size(r.dtype));
    if (count > SIZE_MAX / es) throw UsageError(r.what + ": " + std::to_string(count) + " elements are too many");
    if (is_memory_path(r.path)) {
      const std::shared_ptr<const MemoryArray> a = memory_array_for(r);
      if (a->bytes != count * es)
        throw UsageError(count_mismatch(r, count, "has " + std::to_string(a->bytes / es) + " elements"));
      const auto* p = static_cast<const unsigned char*>(a->data);
      out.assign(p, p + a->bytes);
      return ReadMethod::memory;
    }
    Fd fd;
    fd.fd = open_for(r);
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0)
      throw UsageError(r.what + ": cannot stat " + file_text(r.path) + ": " + errno_text(errno));
    if (S_ISDIR(st.st_mode)) throw UsageError(r.what + ": " + file_text(r.path) + " is a directory");
    if (S_ISREG(st.st_mode) && st.st_size > 0)
      if (auto m = read_mapped(fd.fd, st, r, count, out)) return *m;
    return read_streamed(fd.fd, r, count, out);
  });
}

}  // namespace autotune
