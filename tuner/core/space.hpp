// The valid part of a parameter space, enumerated by depth-first search that checks each constraint
// as soon as every parameter it reads is bound (never a filtered Cartesian product).
//
// Parameters fall into groups that no constraint connects (a constraint links every parameter it names;
// problem and device variables are constants). Each group is enumerated on its own, and the space is the
// product of the groups: a valid config is one valid row of every group. A small space (one group, or a
// product of at most kFlatLimit configs) is stored flat, in lexicographic order of the value indices; a
// larger one stays factorised, so its size, index <-> config mapping, neighbours and uniform sampling (a
// uniform index) never materialise the product. See docs/strategies.md ("Spaces at scale").
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/expr/expr.hpp"

namespace autotune {

/// Values of non-tunable variables visible to constraints: problem sizes (n, rows, cols),
/// device properties (sm_count, max_threads_per_block, max_shared_memory_per_block, warp_size, cc), ...
using Bindings = std::map<std::string, std::int64_t>;

/// How the valid configs are stored. `automatic`: flat when there is one group or the product has at most
/// ParameterSpace::kFlatLimit configs, factorised otherwise. `flat` and `factorised` force one layout (tests,
/// benchmarks); both give the same set of valid configs, the flat one in lexicographic order.
enum class SpaceLayout { automatic, flat, factorised };

/// A set of parameters connected by constraints, with the number of valid combinations of their values
/// (the constraints on these parameters alone). The space's size is the product of its groups' sizes.
struct SpaceGroup {
  std::vector<std::size_t> params;  // positions in ParameterSpace::params(), ascending
  std::size_t size = 0;
};

class ParameterSpace {
 public:
  /// Largest product of group sizes stored flat under SpaceLayout::automatic (2^20 configs: at most
  /// 2 MiB per parameter).
  static constexpr std::size_t kFlatLimit = std::size_t{1} << 20;

  /// Builds the valid space. Throws ExprError if a constraint reads a name that is neither a parameter
  /// nor in fixed (the message names the constraint and the unknown name), if a parameter has more than
  /// 65535 values, or if the number of valid configs does not fit in 63 bits.
  ParameterSpace(std::vector<Param> params, const std::vector<Expr>& constraints, const Bindings& fixed,
                 SpaceLayout layout = SpaceLayout::automatic);

  const std::vector<Param>& params() const { return params_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Product of the parameters' value counts (as double: may exceed 2^64).
  double cartesian_size() const { return cartesian_; }
  double build_seconds() const { return build_seconds_; }
  /// The groups of parameters connected by constraints, ordered by their first parameter (one group per
  /// unconstrained parameter). Empty for a space without parameters.
  const std::vector<SpaceGroup>& groups() const { return groups_; }
  /// True when the configs are stored as a product of groups rather than one flat list.
  bool factorised() const { return blocks_.size() > 1; }

  /// Per-parameter value indices (position in Param::values) of config i (i < size()).
  std::vector<std::uint16_t> indices(std::size_t i) const;
  /// Value index of parameter p in config i, without building the whole vector.
  std::uint16_t value_at(std::size_t i, std::size_t p) const;
  Config config(std::size_t i) const;
  /// Position of a config in the valid space, or -1 if it is not valid (or has unknown values).
  std::ptrdiff_t find(const Config& c) const;
  std::ptrdiff_t find_indices(const std::vector<std::uint16_t>& idx) const;
  /// True if the config satisfies every constraint (also for configs outside the enumerated values); for a space
  /// restricted_to() a set of configurations, also that it is one of them.
  bool is_valid(const Config& c) const;

  /// This space restricted to an explicit set of configurations: those of `configs` that are valid here (others,
  /// and duplicates, are left out), stored flat in lexicographic order of the value indices, as one group of every
  /// parameter. The parameters, constraints and cartesian_size() stay those of this space. Used where the valid
  /// space is what was recorded (the replay of a spec stub, which knows no constraints; docs/interop.md).
  ParameterSpace restricted_to(const std::vector<Config>& configs) const;
  /// True for a space made by restricted_to().
  bool restricted() const { return restricted_; }

  /// Valid configs that differ from config i in exactly one parameter (any other value of it), ordered by
  /// parameter, then value.
  std::vector<std::size_t> neighbours(std::size_t i) const;
  /// Valid configs that differ in one parameter by one step in its value list ("adjacent").
  std::vector<std::size_t> adjacent(std::size_t i) const;

  /// Position of the spec default config, or -1 if the default violates a constraint or the space has none
  /// (without_default()).
  std::ptrdiff_t default_index() const;
  /// This space without a default config: for a spec stub, whose parameters' defaults are their first values
  /// (nobody's choice), so that no strategy starts from them as from a kernel author's guess.
  ParameterSpace without_default() const;

  // ---- Storage, for algorithms that work per block (nearest valid config). A config index is
  // sum over blocks b of row_b x block_stride(b); the rows of each block are sorted lexicographically by the
  // value indices of its parameters (in block_params order). A flat space is one block of every parameter.
  std::size_t block_count() const { return blocks_.size(); }
  const std::vector<std::size_t>& block_params(std::size_t b) const { return blocks_[b].params; }
  std::size_t block_size(std::size_t b) const { return blocks_[b].count; }
  std::size_t block_stride(std::size_t b) const { return blocks_[b].stride; }
  /// Value index of the block's column-th parameter in row `row`.
  std::uint16_t block_value(std::size_t b, std::size_t row, std::size_t column) const {
    const Block& k = blocks_[b];
    return k.rows[row * k.params.size() + column];
  }

 private:
  struct Block {
    std::vector<std::size_t> params;  // positions, ascending
    std::vector<std::uint16_t> rows;  // count x params.size(), lexicographic
    std::size_t count = 0;
    std::size_t stride = 1;
  };
  std::size_t row_of(std::size_t i, const Block& b) const { return (i / b.stride) % b.count; }
  /// Row of the block whose value indices are `key` (params.size() entries), or -1.
  std::ptrdiff_t find_row(const Block& b, const std::uint16_t* key) const;
  /// Valid configs that differ from i in one parameter, for the values `pick` yields per parameter.
  template <typename Pick>
  std::vector<std::size_t> moves(std::size_t i, Pick pick) const;

  std::vector<Param> params_;
  std::vector<Expr> constraints_;
  Bindings fixed_;
  std::vector<Block> blocks_;
  std::vector<std::size_t> block_of_;   // per parameter: its block
  std::vector<std::size_t> column_of_;  // per parameter: its column in the block
  std::vector<SpaceGroup> groups_;
  std::size_t size_ = 0;
  double cartesian_ = 1;
  double build_seconds_ = 0;
  bool restricted_ = false;  // restricted_to(): only the configurations of its blocks_ are valid
  bool no_default_ = false;  // without_default()
};

}  // namespace autotune
