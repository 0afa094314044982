#include "tuner/core/draw.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tuner/core/error.hpp"

namespace autotune {

std::vector<DrawChunk> summarize_draw(const DrawRecipe& recipe, const std::vector<unsigned char>& bytes) {
  if (bytes.size() != recipe.bytes() || recipe.chunk == 0)
    throw UsageError("draw '" + recipe.name + "': " + std::to_string(bytes.size()) + " bytes do not hold " +
                     std::to_string(recipe.count) + " elements in chunks of " + std::to_string(recipe.chunk));
  const std::size_t es = recipe.element_bytes();
  std::vector<DrawChunk> out(recipe.chunks());
  for (std::uint64_t c = 0; c < out.size(); ++c) {
    DrawChunk& s = out[c];
    s.min = std::numeric_limits<double>::infinity();
    s.max = -s.min;
    s.hash = kDrawHashBasis;
    const std::uint64_t end = std::min(recipe.count, (c + 1) * recipe.chunk);
    for (std::uint64_t i = c * recipe.chunk; i < end; ++i) {
      const unsigned char* at = bytes.data() + i * es;
      double x = 0;
      std::uint64_t word = 0;
      if (recipe.kind == DrawRecipe::Kind::float64_signed) {
        std::memcpy(&x, at, 8);
        std::memcpy(&word, at, 8);
      } else if (recipe.kind == DrawRecipe::Kind::float32_signed) {
        float f = 0;
        std::memcpy(&f, at, 4);
        x = f;
        std::uint32_t w = 0;
        std::memcpy(&w, at, 4);
        word = w;
      } else {
        std::int32_t v = 0;
        std::memcpy(&v, at, 4);
        x = v;
        s.wrapped += static_cast<std::uint32_t>(v);
        word = static_cast<std::uint32_t>(v);
      }
      if (recipe.kind != DrawRecipe::Kind::int32_nonzero) {
        neumaier_add(s.sum, s.comp, x);
        s.max_abs = std::max(s.max_abs, std::fabs(x));
      }
      s.min = std::min(s.min, x);
      s.max = std::max(s.max, x);
      s.hash = draw_hash_step(s.hash, word);
    }
  }
  return out;
}

}  // namespace autotune
