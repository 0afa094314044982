// Inputs and expected values of the reduction family: seeded inputs, their draw recipes, the CPU reference and
// the reference from the chunk summaries of inputs drawn on the GPU. See tuner/kernels/reduction_kind.hpp.
#include <algorithm>
#include <cmath>

#include "tuner/kernels/host_util.hpp"
#include "tuner/kernels/reduction.hpp"
#include "tuner/kernels/reduction_kind.hpp"

namespace autotune::kernels::reduction::detail {

namespace {

/// The float sum's reference and tolerance from the compensated sums of its chunks (sum, comp, max_abs).
HostBuffers float_sum_expected(const std::vector<DrawChunk>& parts, std::size_t count, const Workload& w,
                               double tolerance) {
  double sum = 0, comp = 0, max_abs = 0;
  for (const DrawChunk& p : parts) {
    neumaier_add(sum, comp, p.sum);
    neumaier_add(sum, comp, p.comp);
    max_abs = std::max(max_abs, p.max_abs);
  }
  const double tol = sum_tolerance(tolerance, dtype_epsilon(w.dtype), static_cast<std::int64_t>(count), max_abs);
  HostBuffers out;
  out["reference"] = to_bytes(sum + comp);
  out["tolerance"] = to_bytes(tol);
  return out;
}

template <typename T>
HostBuffers float_sum_reference(const std::vector<unsigned char>& in, std::size_t count, const Workload& w,
                                double tolerance) {
  // Neumaier-compensated double sums of the chunks on all cores (as the draw kernel sums its chunks), then of
  // the chunk sums in chunk order: exact for the generated inputs, accurate for any others, and independent
  // of the number of threads.
  std::vector<DrawChunk> parts((count + kChunkElements - 1) / kChunkElements);
  parallel_chunks(count, [&](std::size_t c, std::size_t begin, std::size_t end) {
    DrawChunk p;
    for (std::size_t i = begin; i < end; ++i) {
      const double x = static_cast<double>(load_element<T>(in, i));
      neumaier_add(p.sum, p.comp, x);
      p.max_abs = std::max(p.max_abs, std::fabs(x));
    }
    parts[c] = p;
  });
  return float_sum_expected(parts, count, w, tolerance);
}

template <typename T>
HostBuffers selection_reference(const std::vector<unsigned char>& in, std::size_t count, Op op) {
  T acc = load_element<T>(in, 0);
  for (std::size_t i = 1; i < count; ++i) acc = combine_builtin(op, acc, load_element<T>(in, i));
  HostBuffers out;
  out["out"] = to_bytes(acc);
  return out;
}

}  // namespace

HostBuffers make_reduction_inputs(const Kind& k, std::int64_t n, std::uint64_t seed) {
  std::vector<unsigned char> bytes = host_bytes(static_cast<std::size_t>(n) * static_cast<std::size_t>(k.size));
  const std::size_t scalars = static_cast<std::size_t>(n) * static_cast<std::size_t>(k.components);
  const bool sum = k.op == Op::sum;
  for_each_chunk(scalars, seed, [&](Random& rng, std::size_t begin, std::size_t end) {
    switch (k.elem) {
      case Elem::int32:
        for (std::size_t i = begin; i < end; ++i) {
          // Sums: small values, so that typical sums stay far from overflow (they wrap exactly anyway).
          // min/max/custom: a wide range, so that the extreme value is (almost surely) unique.
          const auto v = static_cast<std::int32_t>(k.op == Op::sum ? uniform_nonzero_int(rng, -1000, 1000)
                                                                   : uniform_nonzero_int(rng, -(1 << 30), 1 << 30));
          store_element(bytes, i, v);
        }
        break;
      case Elem::float64:
        for (std::size_t i = begin; i < end; ++i) store_element(bytes, i, signed_input_value(rng, sum, 53));
        break;
      case Elem::float32:
      case Elem::vector:  // float2/3/4: every component random, non-zero
        for (std::size_t i = begin; i < end; ++i)
          store_element(bytes, i, static_cast<float>(signed_input_value(rng, sum, 24)));
        break;
    }
  });
  HostBuffers out;
  out["in"] = std::move(bytes);
  return out;
}

std::vector<DrawRecipe> reduction_draws(const Kind& k, std::int64_t n, std::uint64_t seed) {
  if (k.custom != nullptr || k.elem == Elem::vector) return {};
  const DrawRecipe::Kind drawn = k.elem == Elem::int32     ? DrawRecipe::Kind::int32_nonzero
                                 : k.elem == Elem::float32 ? DrawRecipe::Kind::float32_signed
                                                           : DrawRecipe::Kind::float64_signed;
  // as make_reduction_inputs()
  return {signed_input_draw("in", seed, static_cast<std::size_t>(n), drawn, k.op == Op::sum,
                            k.op == Op::sum ? 1000 : 1 << 30)};
}

std::optional<HostBuffers> reference_from_draws(const Kind& k, const std::vector<DrawChunk>& chunks, std::size_t count,
                                                const Workload& w, double tolerance) {
  if (k.float_sum()) return float_sum_expected(chunks, count, w, tolerance);
  HostBuffers out;
  if (k.elem == Elem::int32 && k.op == Op::sum) {
    std::uint32_t acc = 0;
    for (const DrawChunk& c : chunks) acc += c.wrapped;
    out["out"] = to_bytes(static_cast<std::int32_t>(acc));
    return out;
  }
  double acc = k.op == Op::min ? chunks.front().min : chunks.front().max;
  for (const DrawChunk& c : chunks) acc = combine_builtin(k.op, acc, k.op == Op::min ? c.min : c.max);
  if (k.elem == Elem::int32) out["out"] = to_bytes(static_cast<std::int32_t>(acc));
  if (k.elem == Elem::float32) out["out"] = to_bytes(static_cast<float>(acc));
  if (k.elem == Elem::float64) out["out"] = to_bytes(acc);
  return out;
}

HostBuffers cpu_reference(const Kind& k, const std::vector<unsigned char>& in, std::size_t count, const Workload& w,
                          double tolerance) {
  HostBuffers out;
  if (k.custom != nullptr) {  // maxmag, the only CPU-implemented custom operator
    Float3 acc{0.0f, 0.0f, 0.0f};
    for (std::size_t i = 0; i < count; ++i) acc = maxmag_combine(acc, load_element<Float3>(in, i));
    out["out"] = to_bytes(acc);
    return out;
  }
  switch (k.elem) {
    case Elem::int32: {
      if (k.op == Op::sum) {
        std::uint32_t acc = 0;  // wraps modulo 2^32 like the kernel's unsigned arithmetic
        for (std::size_t i = 0; i < count; ++i) acc += static_cast<std::uint32_t>(load_element<std::int32_t>(in, i));
        out["out"] = to_bytes(static_cast<std::int32_t>(acc));
      } else {
        std::int32_t acc = load_element<std::int32_t>(in, 0);
        for (std::size_t i = 1; i < count; ++i) acc = combine_builtin(k.op, acc, load_element<std::int32_t>(in, i));
        out["out"] = to_bytes(acc);
      }
      return out;
    }
    case Elem::float32:
      if (k.op == Op::sum) return float_sum_reference<float>(in, count, w, tolerance);
      return selection_reference<float>(in, count, k.op);
    case Elem::float64:
      if (k.op == Op::sum) return float_sum_reference<double>(in, count, w, tolerance);
      return selection_reference<double>(in, count, k.op);
    case Elem::vector:
      break;
  }
  throw UsageError("reduction reference: no CPU reference for workload " + w.key());
}

std::string describe(const Kind& k, const std::vector<unsigned char>& v) {
  switch (k.elem) {
    case Elem::int32:
      return std::to_string(load_element<std::int32_t>(v, 0));
    case Elem::float32:
      return format_number(load_element<float>(v, 0));
    case Elem::float64:
      return format_number(load_element<double>(v, 0));
    case Elem::vector: {
      std::string s = "(";
      for (int i = 0; i < k.components; ++i)
        s += (i ? ", " : "") + format_number(load_element<float>(v, static_cast<std::size_t>(i)));
      return s + ")";
    }
  }
  return hex_bytes(v);
}

}  // namespace autotune::kernels::reduction::detail
