// Array files (tuner/core/data_file.*): .npy headers of versions 1.0, 2.0 and 3.0 made by hand
// (tests/data/files/make_files.py writes them with the Python standard library, not with this reader's writer),
// round trips through write_npy for every dtype, big-endian data, refusals with messages that name the reader
// and the file, raw files, and the mmap and read() paths.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "cli_support.hpp"
#include "test_support.hpp"
#include "tuner/core/data_file.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/kernels/host_util.hpp"

using namespace autotune;
using autotune::kernels::load_element;

namespace {

std::string fixture(const std::string& name) { return autotune_test::data_dir() + "/files/" + name; }

std::string tmp(const std::string& name) { return autotune_test::tmp_path("data_file", name); }

/// The UsageError message of f, or "no error".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

ArrayFileRequest request(const std::string& path, DataFormat format, const std::string& dtype) {
  ArrayFileRequest r;
  r.path = path;
  r.format = format;
  r.dtype = dtype;
  r.what = "argument 'x'";
  return r;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("npy: every dtype round-trips through write_npy and read_npy", "[cpu][data_file]") {
  for (const std::string dtype :
       {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"}) {
    INFO(dtype);
    const std::size_t es = static_cast<std::size_t>(dtype_size(dtype));
    const std::vector<std::uint64_t> shape = {3, 5, 7};
    std::vector<unsigned char> bytes(105 * es);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>((i * 131 + 7) % 251);
    const std::string path = tmp(dtype + ".npy");
    write_npy(path, dtype, shape, bytes);
    const std::string text = autotune_test::slurp(path);
    // NumPy's layout: the magic, version 1.0, a header padded to a multiple of 64 bytes and ended by a newline.
    REQUIRE(text.size() == bytes.size() + 128);
    CHECK(text.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
    CHECK(static_cast<unsigned char>(text[8]) + 256 * static_cast<unsigned char>(text[9]) == 118);
    CHECK(text[127] == '\n');
    CHECK_THAT(text.substr(10, 70), Catch::StartsWith("{'descr': '" + npy_descr(dtype) +
                                                      "', 'fortran_order': False, 'shape': (3, 5, 7), }"));
    const NpyArray a = read_npy(path);
    CHECK(a.dtype == dtype);
    CHECK(a.shape == shape);
    CHECK(a.bytes == bytes);
    std::vector<unsigned char> out;
    CHECK(read_array_file(request(path, DataFormat::npy, dtype), 105, out) == ReadMethod::mapped);
    CHECK(out == bytes);
    std::remove(path.c_str());
  }
  CHECK(npy_descr("uint8") == "|u1");
  CHECK(npy_descr("float64") == "<f8");
  CHECK_THROWS_WITH(npy_descr("float3"), Catch::Contains("float3"));
  // A 0-d array and an empty one.
  const std::string scalar = tmp("scalar.npy");
  write_npy(scalar, "int64", {}, {1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(read_npy(scalar).shape.empty());
  CHECK(load_element<std::int64_t>(read_npy(scalar).bytes, 0) == 1);
  CHECK_THAT(autotune_test::slurp(scalar), Catch::Contains("'shape': (), }"));
  CHECK_THROWS_WITH(write_npy(scalar, "int64", {2}, {1, 0, 0}), Catch::Contains("16 bytes") && Catch::Contains("3"));
  std::remove(scalar.c_str());
}

TEST_CASE("npy: hand-made files of every header version and byte order read as NumPy wrote them", "[cpu][data_file]") {
  const NpyArray f = read_npy(fixture("f32_3x4.npy"));
  CHECK(f.dtype == "float32");
  CHECK(f.shape == std::vector<std::uint64_t>{3, 4});
  REQUIRE(f.bytes.size() == 48);
  for (std::size_t i = 0; i < 12; ++i) CHECK(load_element<float>(f.bytes, i) == 0.25f * static_cast<float>(i));

  // Big-endian doubles are swapped into memory.
  const NpyArray be = read_npy(fixture("f64_be.npy"));
  CHECK(be.dtype == "float64");
  REQUIRE(be.bytes.size() == 40);
  CHECK(load_element<double>(be.bytes, 0) == 1.5);
  CHECK(load_element<double>(be.bytes, 1) == -2.25);
  CHECK(load_element<double>(be.bytes, 2) == 1e300);
  CHECK(load_element<double>(be.bytes, 3) == 0.0);
  CHECK(std::signbit(load_element<double>(be.bytes, 4)));
  const NpyArray be64 = read_npy(fixture("i64_be_2d.npy"));
  CHECK(load_element<std::int64_t>(be64.bytes, 0) == -(std::int64_t{1} << 62));
  CHECK(load_element<std::int64_t>(be64.bytes, 2) == (std::int64_t{1} << 40));
  CHECK(load_element<std::int64_t>(be64.bytes, 3) == -5);

  // Version 2.0 (4-byte header length) and 3.0 (with the spare room NumPy 1.24+ leaves for the shape).
  std::vector<unsigned char> head(200);
  std::ifstream in(fixture("i32_v2.npy"), std::ios::binary);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  const NpyHeader h2 = parse_npy_header(head.data(), static_cast<std::size_t>(in.gcount()), "i32_v2.npy");
  CHECK(h2.major == 2);
  CHECK(h2.data_offset == 128);
  CHECK(h2.descr == "<i4");
  CHECK(h2.shape_text() == "(2, 3)");
  const NpyArray v2 = read_npy(fixture("i32_v2.npy"));
  CHECK(load_element<std::int32_t>(v2.bytes, 0) == -3);
  CHECK(load_element<std::int32_t>(v2.bytes, 5) == 2147483647);
  const NpyArray v3 = read_npy(fixture("u16_v3.npy"));
  CHECK(v3.dtype == "uint16");
  CHECK(load_element<std::uint16_t>(v3.bytes, 2) == 65535);
  CHECK(load_element<std::uint16_t>(v3.bytes, 3) == 0x1234);

  // Fortran order means nothing for one dimension; a 0-d array holds one element.
  const NpyArray u8 = read_npy(fixture("u8_fortran_1d.npy"));
  CHECK(u8.bytes == std::vector<unsigned char>{1, 2, 254, 255});
  const NpyArray zero_d = read_npy(fixture("f32_0d.npy"));
  CHECK(zero_d.shape.empty());
  CHECK(load_element<float>(zero_d.bytes, 0) == 2.5f);

  // A header written in memory: double quotes, Python 2's long suffix, no trailing comma.
  std::string text = "{\"descr\": \"<u4\", \"fortran_order\": False, \"shape\": (2L, 3L)}";
  text += std::string(64 - (10 + text.size() + 1) % 64, ' ') + "\n";
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(text.size()) + '\0' + text;
  const NpyHeader hm = parse_npy_header(reinterpret_cast<const unsigned char*>(file.data()), file.size(), "mem");
  CHECK(hm.dtype == "uint32");
  CHECK(hm.shape == std::vector<std::uint64_t>{2, 3});
  CHECK(hm.elements() == 6);
}

TEST_CASE("npy: what this reader cannot take is refused by name", "[cpu][data_file]") {
  CHECK_THAT(error_of([] { read_npy(fixture("f32_fortran.npy")); }),
             Catch::Contains("f32_fortran.npy") && Catch::Contains("Fortran") && Catch::Contains("(2, 3)"));
  CHECK_THAT(error_of([] { read_npy(fixture("bool.npy")); }), Catch::Contains("|b1") && Catch::Contains("bool"));
  CHECK_THAT(error_of([] { read_npy(fixture("i32_raw.bin")); }),
             Catch::Contains("i32_raw.bin") && Catch::Contains("not a .npy file") && Catch::Contains("\"raw\""));
  CHECK_THAT(error_of([] { read_npy(fixture("no_such.npy")); }),
             Catch::Contains("no_such.npy") && Catch::Contains("No such file"));

  auto header = [](const std::string& dict, char major = 1) {
    std::string text = dict;
    text += std::string(64 - (10 + text.size() + 1) % 64, ' ') + "\n";
    return std::string("\x93NUMPY", 6) + major + '\0' + static_cast<char>(text.size()) + '\0' + text;
  };
  auto parsed = [](const std::string& file) {
    return error_of(
        [&] { parse_npy_header(reinterpret_cast<const unsigned char*>(file.data()), file.size(), "h.npy"); });
  };
  CHECK_THAT(parsed(header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 4)),
             Catch::Contains("version 4.0") && Catch::Contains("1.0, 2.0, 3.0"));
  CHECK_THAT(parsed(header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }")),
             Catch::Contains("structured"));
  CHECK_THAT(parsed(header("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }")), Catch::Contains("complex"));
  CHECK_THAT(parsed(header("{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }")),
             Catch::Contains("'<U3'") && Catch::Contains("does not support"));
  CHECK_THAT(parsed(header("{'descr': '<f4', 'shape': (3,), }")), Catch::Contains("lacks"));
  CHECK_THAT(parsed(header("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }")),
             Catch::Contains("non-negative"));
  CHECK_THAT(parsed(header("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")),
             Catch::Contains("too many elements"));
  CHECK_THAT(parsed(header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}")),
             Catch::Contains("unknown key 'x'"));
  const std::string good = header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }");
  CHECK_THAT(parsed(good.substr(0, 40)), Catch::Contains("too short"));

  // Data shorter or longer than the header says.
  const std::string path = tmp("cut.npy");
  write_bytes(path, good + std::string(11, '\0'));
  CHECK_THAT(error_of([&] { read_npy(path); }),
             Catch::Contains("truncated") && Catch::Contains("12 bytes of data") && Catch::Contains("has 11"));
  write_bytes(path, good + std::string(13, '\0'));
  CHECK_THAT(error_of([&] { read_npy(path); }), Catch::Contains("longer than its header says"));
  std::remove(path.c_str());
}

TEST_CASE("array files: wrong size, dtype and shape are refused naming the argument and the file", "[cpu][data_file]") {
  // Missing file.
  const ArrayFileRequest missing = request(fixture("absent.npy"), DataFormat::npy, "float32");
  CHECK_THAT(error_of([&] { probe_array_file(missing); }),
             Catch::StartsWith("argument 'x'") && Catch::Contains("absent.npy") && Catch::Contains("No such file"));
  // dtype: the file says <f8, the argument is float32.
  const ArrayFileRequest f64 = request(fixture("f64_be.npy"), DataFormat::npy, "float32");
  CHECK_THAT(error_of([&] { probe_array_file(f64); }), Catch::Contains("argument 'x' is float32") &&
                                                           Catch::Contains("f64_be.npy") &&
                                                           Catch::Contains(">f8 (float64)"));
  std::vector<unsigned char> out;
  CHECK_THAT(error_of([&] { read_array_file(f64, 5, out); }), Catch::Contains(">f8 (float64)"));
  // Shape: the product of the npy shape must be the argument's count.
  const ArrayFileRequest f32 = request(fixture("f32_3x4.npy"), DataFormat::npy, "float32");
  const ArrayFileInfo info = probe_array_file(f32);
  REQUIRE(info.elements);
  CHECK(*info.elements == 12);
  REQUIRE(info.header);
  CHECK(info.header->shape_text() == "(3, 4)");
  CHECK_NOTHROW(check_array_count(f32, info, 12));
  const std::string shape_msg = error_of([&] { check_array_count(f32, info, 13); });
  CHECK_THAT(shape_msg, Catch::StartsWith("argument 'x' needs 13 elements of float32 (52 bytes)") &&
                            Catch::Contains("f32_3x4.npy") && Catch::Contains("(3, 4) = 12 elements"));
  CHECK(error_of([&] { read_array_file(f32, 13, out); }) == shape_msg);
  // Raw: a size that is not the count, or not whole elements.
  const ArrayFileRequest raw = request(fixture("i32_raw.bin"), DataFormat::raw, "int32");
  CHECK_THAT(error_of([&] { read_array_file(raw, 6, out); }), Catch::Contains("needs 6 elements of int32 (24 bytes)") &&
                                                                  Catch::Contains("i32_raw.bin") &&
                                                                  Catch::Contains("has 20 bytes"));
  const ArrayFileRequest raw8 = request(fixture("i32_raw.bin"), DataFormat::raw, "float64");
  CHECK_THAT(error_of([&] { probe_array_file(raw8); }),
             Catch::Contains("20 bytes, not a whole number of float64 elements (8 bytes each)"));
  // A dtype the project does not know.
  CHECK_THROWS_AS(probe_array_file(request(fixture("i32_raw.bin"), DataFormat::raw, "int128")), UsageError);
  // A directory is no file.
  CHECK_THAT(error_of([&] { probe_array_file(request(autotune_test::data_dir(), DataFormat::raw, "int32")); }),
             Catch::Contains("is a directory"));
}

TEST_CASE("array files: raw round trip, formats by name, the mmap and the read() paths", "[cpu][data_file]") {
  CHECK(data_format_from_path("a/b/x.npy") == DataFormat::npy);
  CHECK(data_format_from_path("x.NPY") == DataFormat::npy);
  CHECK(data_format_from_path("x.bin") == DataFormat::raw);
  CHECK(data_format_from_path("x.raw") == DataFormat::raw);
  CHECK_FALSE(data_format_from_path("x.dat").has_value());
  CHECK_FALSE(data_format_from_path("dir.npy/x").has_value());
  CHECK(parse_data_format("raw") == DataFormat::raw);
  CHECK_FALSE(parse_data_format("hdf5").has_value());

  // Raw round trip through the mapped path, and the hand-made raw fixture.
  std::vector<unsigned char> bytes(4096 * 8);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  const std::string path = tmp("r.bin");
  write_raw(path, bytes);
  std::vector<unsigned char> out;
  CHECK(read_array_file(request(path, DataFormat::raw, "uint64"), 4096, out) == ReadMethod::mapped);
  CHECK(out == bytes);
  std::remove(path.c_str());
  CHECK(read_array_file(request(fixture("i32_raw.bin"), DataFormat::raw, "int32"), 5, out) == ReadMethod::mapped);
  CHECK(load_element<std::int32_t>(out, 0) == 7);
  CHECK(load_element<std::int32_t>(out, 3) == -2147483647 - 1);

  // A pipe cannot be mapped: it is read with read(), header and data, big-endian data swapped. Its size is
  // unknown to a probe, which opens nothing (opening a pipe would wait for a writer).
  const std::string fifo = tmp("pipe.npy");
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const ArrayFileInfo probed = probe_array_file(request(fifo, DataFormat::npy, "float64"));
  CHECK_FALSE(probed.elements.has_value());
  CHECK_NOTHROW(check_array_count(request(fifo, DataFormat::npy, "float64"), probed, 99));
  const std::string be = autotune_test::slurp(fixture("f64_be.npy"));
  auto feed = [&](const std::string& data) {
    return std::thread([&fifo, data] {
      std::ofstream w(fifo, std::ios::binary);
      w.write(data.data(), static_cast<std::streamsize>(data.size()));
    });
  };
  std::thread writer = feed(be);
  CHECK(read_array_file(request(fifo, DataFormat::npy, "float64"), 5, out) == ReadMethod::streamed);
  writer.join();
  REQUIRE(out.size() == 40);
  CHECK(load_element<double>(out, 1) == -2.25);
  CHECK(load_element<double>(out, 2) == 1e300);
  // Through the pipe too, a count that is not the file's is refused by name.
  writer = feed(be);
  CHECK_THAT(error_of([&] { read_array_file(request(fifo, DataFormat::npy, "float64"), 6, out); }),
             Catch::Contains("needs 6 elements of float64") && Catch::Contains("(5,) = 5 elements"));
  writer.join();
  writer = feed(std::string(20, 'x'));
  CHECK_THAT(error_of([&] { read_array_file(request(fifo, DataFormat::raw, "int32"), 6, out); }),
             Catch::Contains("ends after 20 bytes of data"));
  writer.join();
  writer = feed(std::string(28, 'x'));
  CHECK_THAT(error_of([&] { read_array_file(request(fifo, DataFormat::raw, "int32"), 6, out); }),
             Catch::Contains("holds more than 24 bytes"));
  writer.join();
  std::remove(fifo.c_str());
}
