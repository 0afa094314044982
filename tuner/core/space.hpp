// The valid part of a parameter space, enumerated by depth-first search that checks each constraint
// as soon as every parameter it reads is bound (never a filtered Cartesian product).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/expr.hpp"

namespace autotune {

/// Values of non-tunable variables visible to constraints: problem sizes (n, rows, cols),
/// device properties (sm_count, max_threads_per_block, max_shared_memory_per_block, warp_size, cc), ...
using Bindings = std::map<std::string, std::int64_t>;

class ParameterSpace {
 public:
  /// Builds the valid space. Throws ExprError if a constraint reads a name that is neither a parameter
  /// nor in fixed (the message names the constraint and the unknown name).
  ParameterSpace(std::vector<Param> params, const std::vector<Expr>& constraints, const Bindings& fixed);

  const std::vector<Param>& params() const { return params_; }
  std::size_t size() const { return configs_.size(); }
  bool empty() const { return configs_.empty(); }
  /// Product of the parameters' value counts (as double: may exceed 2^64).
  double cartesian_size() const { return cartesian_; }
  double build_seconds() const { return build_seconds_; }

  /// Configs are stored as per-parameter value indices (position in Param::values).
  const std::vector<std::uint16_t>& indices(std::size_t i) const { return configs_[i]; }
  Config config(std::size_t i) const;
  /// Position of a config in the valid space, or -1 if it is not valid (or has unknown values).
  std::ptrdiff_t find(const Config& c) const;
  std::ptrdiff_t find_indices(const std::vector<std::uint16_t>& idx) const;
  /// True if the config satisfies every constraint (also for configs outside the enumerated values).
  bool is_valid(const Config& c) const;

  /// Valid configs that differ from config i in exactly one parameter (any other value of it).
  std::vector<std::size_t> neighbours(std::size_t i) const;
  /// Valid configs that differ in one parameter by one step in its value list ("adjacent").
  std::vector<std::size_t> adjacent(std::size_t i) const;

  /// Position of the spec default config, or -1 if the default violates a constraint.
  std::ptrdiff_t default_index() const;

 private:
  std::vector<Param> params_;
  std::vector<Expr> constraints_;
  Bindings fixed_;
  std::vector<std::vector<std::uint16_t>> configs_;
  std::unordered_map<std::string, std::size_t> lookup_;  // key of indices -> position
  double cartesian_ = 1;
  double build_seconds_ = 0;
};

}  // namespace autotune
