// Array files: NumPy .npy (format versions 1.0, 2.0 and 3.0) and raw little-endian binary, read into the byte
// buffers of kernel inputs and expected values, and written by captures. Element types are the project's dtype
// names (int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, float32, float64); data in memory are
// always little-endian, C order. Files are read through mmap with one copy into the destination vector; a file
// that cannot be mapped (a pipe, a special file) is read with read(). Errors are UsageError naming the reader
// (ArrayFileRequest::what) and the file; spec code turns them into SpecErrors with the field's JSON pointer.
// A path "memory:NAME" names an in-memory array of the calling process instead of a file (memory_arrays.hpp):
// probe_array_file and read_array_file read it in place of a file, with the same checks and messages.
// All functions are thread-safe (the only shared state is the registry of in-memory arrays, which locks).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace autotune {

enum class DataFormat { npy, raw };

/// "npy" or "raw".
const char* to_string(DataFormat f);
/// "npy" / "raw" as a DataFormat; nullopt for anything else.
std::optional<DataFormat> parse_data_format(const std::string& text);
/// The format a file name's extension says: .npy -> npy, .bin and .raw -> raw (case-insensitive); else nullopt.
std::optional<DataFormat> data_format_from_path(const std::string& path);

/// The header of a .npy file.
struct NpyHeader {
  int major = 1, minor = 0;  // format version: 1.0, 2.0 or 3.0
  std::string descr;         // as written: "<f4", ">i8", "|u1"
  std::string dtype;         // the project's name of the element type: "float32", "uint8", ...
  bool big_endian = false;   // the data must be byte-swapped into memory
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;  // empty for a 0-d array (one element)
  std::size_t data_offset = 0;       // bytes before the data (magic, version, length field, header)

  /// Product of shape (1 for a 0-d array).
  std::uint64_t elements() const;
  /// "(10, 100)", "(3,)" or "()", as NumPy prints shapes.
  std::string shape_text() const;
};

/// Parses the header at the start of `bytes` (`size` bytes available, at least the whole header). UsageError
/// naming `file` when the bytes are not a .npy header this reader supports: bad magic, a version other than
/// 1.0/2.0/3.0, a malformed dictionary, a structured, object, string, bool or complex dtype, Fortran order with
/// more than one dimension, or a shape whose element count overflows 64 bits.
NpyHeader parse_npy_header(const unsigned char* bytes, std::size_t size, const std::string& file);

/// The little-endian .npy descr of a project dtype: "float32" -> "<f4", "uint8" -> "|u1". UsageError for a dtype
/// .npy files cannot hold (float2, float3, float4, unknown names).
std::string npy_descr(const std::string& dtype);

/// Writes a .npy file: version 1.0, little-endian `dtype`, C order, the header padded with spaces to a multiple of
/// 64 bytes and ended by '\n' as NumPy writes it. `bytes` must hold exactly the product of shape elements (an
/// empty shape: one element). UsageError for a size mismatch or a dtype npy_descr refuses; EnvironmentError when
/// the file cannot be written.
void write_npy(const std::string& path, const std::string& dtype, const std::vector<std::uint64_t>& shape,
               const std::vector<unsigned char>& bytes);

/// Writes bytes as a raw file (no header). EnvironmentError when the file cannot be written.
void write_raw(const std::string& path, const std::vector<unsigned char>& bytes);

/// An array read from a .npy file: little-endian bytes of shape's product of elements of dtype.
struct NpyArray {
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::vector<unsigned char> bytes;
};

/// Reads a whole .npy file, whatever its dtype among the project's (big-endian data swapped). UsageError naming
/// the file when it is missing, not .npy, or holds fewer or more bytes than its header says.
NpyArray read_npy(const std::string& path);

/// A file that a reader (a kernel argument, an expected output) takes its values from.
struct ArrayFileRequest {
  std::string path;  // as opened (a spec resolves it against its own folder)
  DataFormat format = DataFormat::npy;
  std::string dtype;  // element type the reader needs
  std::string what;   // the reader, for messages: "argument 'x'"
};

/// What probe_array_file learned without reading the data.
struct ArrayFileInfo {
  /// Elements the file holds; nullopt when the file is not a regular file (a pipe: its size is known only once
  /// it has been read).
  std::optional<std::uint64_t> elements;
  std::uint64_t file_bytes = 0;     // size of a regular file
  std::optional<NpyHeader> header;  // npy files that are regular files
};

/// Checks what needs no element count: the file exists and can be opened; npy: a valid header whose dtype is
/// r.dtype and whose data size matches the file's; raw: a size that is a multiple of the element size. Reads only
/// a regular file's header (and opens nothing that is not a regular file). UsageError naming r.what and r.path.
ArrayFileInfo probe_array_file(const ArrayFileRequest& r);

/// UsageError naming r.what and r.path unless `info` (from probe_array_file(r)) says the file holds exactly
/// `count` elements (nothing to check when the file is not a regular file).
void check_array_count(const ArrayFileRequest& r, const ArrayFileInfo& info, std::uint64_t count);

/// How read_array_file read a file: mapped, read(), or copied from an in-memory array (memory_arrays.hpp).
enum class ReadMethod { mapped, streamed, memory };

/// Reads exactly `count` elements of r.dtype from r.path into `out` (resized to count x element size;
/// big-endian npy data swapped): a regular file through mmap, with one copy into `out`; a file that cannot be
/// mapped (a pipe, a special file) with read(), straight into `out`. Checks as probe_array_file and
/// check_array_count do; a regular file whose size or modification time changes while it is read is an error
/// (UsageError "changed while it was read"). A file truncated by another process during the copy can end the
/// process with SIGBUS, as with any mapped file. UsageError naming r.what and r.path.
ReadMethod read_array_file(const ArrayFileRequest& r, std::uint64_t count, std::vector<unsigned char>& out);

}  // namespace autotune
