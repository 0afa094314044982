#include "tuner/core/space.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "tuner/core/error.hpp"

namespace autotune {

namespace {

/// A variable a constraint reads and where its current value lives (a bound parameter or a constant).
struct Slot {
  const std::string* name;
  const std::int64_t* value;
};

/// Pruned depth-first enumeration of the valid value-index rows of `members` (ascending parameter positions),
/// lexicographic in that order. Each constraint of `cons` reads only members and fixed names; it is checked at
/// the depth where its last member gets bound. Returns the rows flattened (count x members.size()).
std::vector<std::uint16_t> enumerate(const std::vector<Param>& params, const std::vector<std::size_t>& members,
                                     const std::vector<const Expr*>& cons, const Bindings& fixed) {
  const std::size_t w = members.size();
  std::vector<std::uint16_t> rows;
  if (w == 0) return rows;
  std::vector<std::int64_t> current(w, 0);
  std::vector<std::vector<Slot>> slots(cons.size());
  std::vector<std::vector<std::size_t>> at_depth(w);
  for (std::size_t c = 0; c < cons.size(); ++c) {
    std::size_t depth = 0;
    for (const std::string& v : cons[c]->variables()) {
      auto col = std::find_if(members.begin(), members.end(), [&](std::size_t p) { return params[p].name == v; });
      if (col != members.end()) {
        const auto k = static_cast<std::size_t>(col - members.begin());
        depth = std::max(depth, k);
        slots[c].push_back({&v, &current[k]});
      } else {
        slots[c].push_back({&v, &fixed.at(v)});
      }
    }
    at_depth[depth].push_back(c);
  }
  const std::vector<Slot>* active = nullptr;
  const VarLookup lookup = [&active](const std::string& name) -> std::optional<std::int64_t> {
    for (const Slot& s : *active)
      if (*s.name == name) return *s.value;
    return std::nullopt;
  };
  auto holds = [&](std::size_t d) {
    for (std::size_t c : at_depth[d]) {
      active = &slots[c];
      if (cons[c]->eval(lookup) == 0) return false;
    }
    return true;
  };

  std::vector<std::uint16_t> idx(w, 0);
  std::size_t d = 0;
  for (;;) {
    const auto& values = params[members[d]].values;
    bool ok = idx[d] < values.size();
    if (ok) {
      current[d] = values[idx[d]];
      ok = holds(d);
    }
    if (ok && d + 1 == w) rows.insert(rows.end(), idx.begin(), idx.end());
    if (ok && d + 1 < w) {
      idx[++d] = 0;
      continue;
    }
    for (;;) {  // advance at this depth, backtracking when exhausted
      const std::size_t count = params[members[d]].values.size();
      if (idx[d] < count) ++idx[d];
      if (idx[d] < count) break;
      if (d == 0) return rows;
      --d;
    }
  }
}

/// Lexicographic order over every parameter of the product of blocks whose rows are each lexicographic: a
/// depth-first walk over the parameters in which each block keeps the range of its rows that match the values
/// bound so far (contiguous, because the rows are sorted and a block's parameters are bound in its column order).
class FlatMerge {
 public:
  FlatMerge(std::size_t np, const std::vector<std::size_t>& block_of, const std::vector<std::size_t>& column_of,
            const std::vector<const std::vector<std::uint16_t>*>& rows, const std::vector<std::size_t>& widths)
      : np_(np), block_of_(block_of), column_of_(column_of), rows_(rows), widths_(widths), idx_(np) {
    for (std::size_t b = 0; b < rows.size(); ++b) range_.push_back({0, rows[b]->size() / widths[b]});
  }
  std::vector<std::uint16_t> run() {
    walk(0);
    return std::move(out_);
  }

 private:
  void walk(std::size_t p) {
    if (p == np_) {
      out_.insert(out_.end(), idx_.begin(), idx_.end());
      return;
    }
    const std::size_t b = block_of_[p], col = column_of_[p], w = widths_[b];
    const auto& rows = *rows_[b];
    const auto saved = range_[b];
    for (std::size_t r = saved.first; r < saved.second;) {
      const std::uint16_t v = rows[r * w + col];
      std::size_t e = r + 1;
      while (e < saved.second && rows[e * w + col] == v) ++e;
      range_[b] = {r, e};
      idx_[p] = v;
      walk(p + 1);
      r = e;
    }
    range_[b] = saved;
  }

  std::size_t np_;
  const std::vector<std::size_t>& block_of_;
  const std::vector<std::size_t>& column_of_;
  const std::vector<const std::vector<std::uint16_t>*>& rows_;
  const std::vector<std::size_t>& widths_;
  std::vector<std::pair<std::size_t, std::size_t>> range_;
  std::vector<std::uint16_t> idx_;
  std::vector<std::uint16_t> out_;
};

}  // namespace

ParameterSpace::ParameterSpace(std::vector<Param> params, const std::vector<Expr>& constraints,
                               const Bindings& fixed, SpaceLayout layout)
    : params_(std::move(params)), constraints_(constraints), fixed_(fixed) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t np = params_.size();
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < np; ++i) {
    position[params_[i].name] = i;
    cartesian_ *= static_cast<double>(params_[i].values.size());
    if (params_[i].values.size() > 65535) throw ExprError("parameter " + params_[i].name + " has too many values");
  }

  // Groups: union-find over the parameters each constraint names.
  std::vector<std::size_t> parent(np);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto root = [&](std::size_t p) {
    while (parent[p] != p) p = parent[p] = parent[parent[p]];
    return p;
  };
  std::vector<const Expr*> constant;  // constraints on fixed variables only
  std::vector<std::size_t> first_param(constraints_.size(), np);
  for (std::size_t c = 0; c < constraints_.size(); ++c) {
    const Expr& e = constraints_[c];
    for (const std::string& v : e.variables()) {
      auto it = position.find(v);
      if (it == position.end()) {
        if (!fixed_.count(v))
          throw ExprError("constraint \"" + e.text() + "\" uses unknown name '" + v +
                          "' (not a parameter, problem dimension or device variable)");
        continue;
      }
      if (first_param[c] == np) first_param[c] = it->second;
      else parent[root(it->second)] = root(first_param[c]);
    }
    if (first_param[c] == np) constant.push_back(&e);
  }
  const VarLookup fixed_lookup = [this](const std::string& name) -> std::optional<std::int64_t> {
    auto f = fixed_.find(name);
    if (f == fixed_.end()) return std::nullopt;
    return f->second;
  };
  bool holds = np > 0;
  for (const Expr* e : constant) holds = holds && e->eval(fixed_lookup) != 0;

  // Enumerate each group on its own (groups ordered by their first parameter).
  std::vector<std::size_t> group_of_root(np, np);
  std::vector<Block> groups;
  block_of_.assign(np, 0);
  column_of_.assign(np, 0);
  for (std::size_t p = 0; p < np; ++p) {
    std::size_t& g = group_of_root[root(p)];
    if (g == np) {
      g = groups.size();
      groups.emplace_back();
    }
    block_of_[p] = g;
    column_of_[p] = groups[g].params.size();
    groups[g].params.push_back(p);
  }
  for (std::size_t g = 0; g < groups.size() && holds; ++g) {
    std::vector<const Expr*> cons;
    for (std::size_t c = 0; c < constraints_.size(); ++c)
      if (first_param[c] < np && block_of_[first_param[c]] == g) cons.push_back(&constraints_[c]);
    Block& b = groups[g];
    b.rows = enumerate(params_, b.params, cons, fixed_);
    b.count = b.rows.size() / b.params.size();
    b.rows.shrink_to_fit();
  }
  double product = holds ? 1.0 : 0.0;
  for (const Block& b : groups) {
    groups_.push_back({b.params, holds ? b.count : 0});
    product *= static_cast<double>(groups_.back().size);
  }
  if (product > static_cast<double>(std::numeric_limits<std::int64_t>::max()))
    throw ExprError("the space has more than 2^63 valid configurations");
  size_ = static_cast<std::size_t>(product);

  const bool flat = layout == SpaceLayout::flat ||
                    (layout == SpaceLayout::automatic && (groups.size() == 1 || size_ <= kFlatLimit));
  if (size_ == 0) {
    block_of_.assign(np, 0);
  } else if (flat && groups.size() > 1) {
    std::vector<const std::vector<std::uint16_t>*> rows;
    std::vector<std::size_t> widths;
    for (const Block& b : groups) {
      rows.push_back(&b.rows);
      widths.push_back(b.params.size());
    }
    Block all;
    all.rows = FlatMerge(np, block_of_, column_of_, rows, widths).run();
    all.params.resize(np);
    std::iota(all.params.begin(), all.params.end(), std::size_t{0});
    all.count = size_;
    blocks_.push_back(std::move(all));
    block_of_.assign(np, 0);
    std::iota(column_of_.begin(), column_of_.end(), std::size_t{0});
  } else {
    blocks_ = std::move(groups);
    std::size_t stride = 1;
    for (std::size_t b = blocks_.size(); b-- > 0;) {
      blocks_[b].stride = stride;
      stride *= blocks_[b].count;
    }
  }
  build_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::uint16_t> ParameterSpace::indices(std::size_t i) const {
  std::vector<std::uint16_t> idx(params_.size());
  for (const Block& b : blocks_) {
    const std::uint16_t* row = &b.rows[row_of(i, b) * b.params.size()];
    for (std::size_t c = 0; c < b.params.size(); ++c) idx[b.params[c]] = row[c];
  }
  return idx;
}

std::uint16_t ParameterSpace::value_at(std::size_t i, std::size_t p) const {
  const Block& b = blocks_[block_of_[p]];
  return b.rows[row_of(i, b) * b.params.size() + column_of_[p]];
}

Config ParameterSpace::config(std::size_t i) const {
  if (i >= size_) throw std::out_of_range("ParameterSpace::config: index out of range");
  const std::vector<std::uint16_t> idx = indices(i);
  Config c;
  for (std::size_t p = 0; p < params_.size(); ++p) c.set(params_[p].name, params_[p].values[idx[p]]);
  return c;
}

std::ptrdiff_t ParameterSpace::find_row(const Block& b, const std::uint16_t* key) const {
  const std::size_t w = b.params.size();
  std::size_t lo = 0, n = b.count;
  while (n > 0) {  // lower bound
    const std::size_t half = n / 2;
    const std::uint16_t* row = &b.rows[(lo + half) * w];
    if (std::lexicographical_compare(row, row + w, key, key + w)) {
      lo += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  if (lo < b.count && std::equal(key, key + w, &b.rows[lo * w])) return static_cast<std::ptrdiff_t>(lo);
  return -1;
}

std::ptrdiff_t ParameterSpace::find_indices(const std::vector<std::uint16_t>& idx) const {
  if (idx.size() != params_.size() || size_ == 0) return -1;
  std::size_t at = 0;
  std::vector<std::uint16_t> key;
  for (const Block& b : blocks_) {
    key.clear();
    for (std::size_t p : b.params) key.push_back(idx[p]);
    const std::ptrdiff_t r = find_row(b, key.data());
    if (r < 0) return -1;
    at += static_cast<std::size_t>(r) * b.stride;
  }
  return static_cast<std::ptrdiff_t>(at);
}

std::ptrdiff_t ParameterSpace::find(const Config& c) const {
  if (c.values().size() != params_.size()) return -1;
  std::vector<std::uint16_t> idx(params_.size());
  for (std::size_t p = 0; p < params_.size(); ++p) {
    auto v = c.get(params_[p].name);
    if (!v) return -1;
    int k = params_[p].index_of(*v);
    if (k < 0) return -1;
    idx[p] = static_cast<std::uint16_t>(k);
  }
  return find_indices(idx);
}

bool ParameterSpace::is_valid(const Config& c) const {
  for (const auto& p : params_)
    if (!c.has(p.name)) return false;
  auto lookup = [&](const std::string& name) -> std::optional<std::int64_t> {
    if (auto v = c.get(name)) return v;
    auto f = fixed_.find(name);
    if (f != fixed_.end()) return f->second;
    return std::nullopt;
  };
  for (const Expr& e : constraints_)
    if (e.eval(lookup) == 0) return false;
  return !restricted_ || find(c) >= 0;
}

ParameterSpace ParameterSpace::restricted_to(const std::vector<Config>& configs) const {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t np = params_.size();
  std::vector<std::vector<std::uint16_t>> rows;
  rows.reserve(configs.size());
  for (const Config& c : configs)
    if (const std::ptrdiff_t i = find(c); i >= 0) rows.push_back(indices(static_cast<std::size_t>(i)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());

  ParameterSpace s = *this;
  s.restricted_ = true;
  s.size_ = rows.size();
  s.blocks_.clear();
  s.block_of_.assign(np, 0);
  s.column_of_.resize(np);
  std::iota(s.column_of_.begin(), s.column_of_.end(), std::size_t{0});
  Block all;
  all.params.resize(np);
  std::iota(all.params.begin(), all.params.end(), std::size_t{0});
  all.count = rows.size();
  for (const auto& r : rows) all.rows.insert(all.rows.end(), r.begin(), r.end());
  s.groups_.clear();
  if (np > 0) s.groups_.push_back({all.params, all.count});
  if (all.count > 0) s.blocks_.push_back(std::move(all));
  s.build_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

template <typename Pick>
std::vector<std::size_t> ParameterSpace::moves(std::size_t i, Pick pick) const {
  if (i >= size_) throw std::out_of_range("ParameterSpace: index out of range");
  std::vector<std::size_t> out;
  std::vector<std::uint16_t> key;
  for (std::size_t p = 0; p < params_.size(); ++p) {
    const Block& b = blocks_[block_of_[p]];
    const std::size_t row = row_of(i, b), w = b.params.size(), col = column_of_[p];
    key.assign(&b.rows[row * w], &b.rows[row * w] + w);
    const std::uint16_t orig = key[col];
    pick(p, orig, [&](std::uint16_t k) {
      key[col] = k;
      const std::ptrdiff_t r = find_row(b, key.data());
      if (r >= 0) out.push_back(i - row * b.stride + static_cast<std::size_t>(r) * b.stride);
    });
  }
  return out;
}

std::vector<std::size_t> ParameterSpace::neighbours(std::size_t i) const {
  return moves(i, [this](std::size_t p, std::uint16_t orig, const auto& visit) {
    for (std::size_t k = 0; k < params_[p].values.size(); ++k)
      if (k != orig) visit(static_cast<std::uint16_t>(k));
  });
}

ParameterSpace ParameterSpace::without_default() const {
  ParameterSpace s = *this;
  s.no_default_ = true;
  return s;
}

std::vector<std::size_t> ParameterSpace::adjacent(std::size_t i) const {
  return moves(i, [this](std::size_t p, std::uint16_t orig, const auto& visit) {
    if (orig > 0) visit(static_cast<std::uint16_t>(orig - 1));
    if (orig + 1u < params_[p].values.size()) visit(static_cast<std::uint16_t>(orig + 1));
  });
}

std::ptrdiff_t ParameterSpace::default_index() const {
  if (no_default_) return -1;
  Config c;
  for (const auto& p : params_) c.set(p.name, p.default_value);
  return find(c);
}

}  // namespace autotune
