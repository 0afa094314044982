#include "tuner/core/space.hpp"

#include <algorithm>

#include "tuner/core/error.hpp"

namespace autotune {

namespace {

std::string key_of(const std::vector<std::uint16_t>& idx) {
  return std::string(reinterpret_cast<const char*>(idx.data()), idx.size() * sizeof(std::uint16_t));
}

}  // namespace

ParameterSpace::ParameterSpace(std::vector<Param> params, const std::vector<Expr>& constraints,
                               const Bindings& fixed)
    : params_(std::move(params)), constraints_(constraints), fixed_(fixed) {
  auto t0 = std::chrono::steady_clock::now();
  const std::size_t np = params_.size();
  std::map<std::string, std::size_t> position;
  for (std::size_t i = 0; i < np; ++i) {
    position[params_[i].name] = i;
    cartesian_ *= static_cast<double>(params_[i].values.size());
    if (params_[i].values.size() > 65535) throw ExprError("parameter " + params_[i].name + " has too many values");
  }

  // Each constraint is checked at the depth where its last parameter gets bound (np = before any).
  std::vector<std::vector<const Expr*>> at_depth(np + 1);
  for (const Expr& c : constraints_) {
    std::size_t depth = np;  // only fixed variables
    std::size_t deepest = 0;
    bool any = false;
    for (const std::string& v : c.variables()) {
      auto it = position.find(v);
      if (it != position.end()) {
        deepest = any ? std::max(deepest, it->second) : it->second;
        any = true;
      } else if (!fixed_.count(v)) {
        throw ExprError("constraint \"" + c.text() + "\" uses unknown name '" + v +
                        "' (not a parameter, problem dimension or device variable)");
      }
    }
    if (any) depth = deepest;
    at_depth[depth].push_back(&c);
  }

  std::vector<std::uint16_t> idx(np, 0);
  auto lookup = [&](const std::string& name) -> std::optional<std::int64_t> {
    auto it = position.find(name);
    if (it != position.end()) return params_[it->second].values[idx[it->second]];
    auto f = fixed_.find(name);
    if (f != fixed_.end()) return f->second;
    return std::nullopt;
  };
  auto holds = [&](const std::vector<const Expr*>& cs) {
    for (const Expr* c : cs)
      if (c->eval(lookup) == 0) return false;
    return true;
  };

  if (holds(at_depth[np]) && np > 0) {
    // Iterative depth-first enumeration in lexicographic order of value indices.
    std::size_t d = 0;
    idx[0] = 0;
    for (;;) {
      bool ok = idx[d] < params_[d].values.size() && holds(at_depth[d]);
      if (ok && d + 1 == np) {
        lookup_.emplace(key_of(idx), configs_.size());
        configs_.push_back(idx);
      }
      if (ok && d + 1 < np) {
        ++d;
        idx[d] = 0;
        continue;
      }
      // advance at this depth, backtracking when exhausted
      for (;;) {
        if (idx[d] < params_[d].values.size()) ++idx[d];
        if (idx[d] < params_[d].values.size()) break;
        if (d == 0) goto done;
        --d;
      }
    }
  done:;
  }
  build_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Config ParameterSpace::config(std::size_t i) const {
  Config c;
  const auto& idx = configs_.at(i);
  for (std::size_t p = 0; p < params_.size(); ++p) c.set(params_[p].name, params_[p].values[idx[p]]);
  return c;
}

std::ptrdiff_t ParameterSpace::find_indices(const std::vector<std::uint16_t>& idx) const {
  if (idx.size() != params_.size()) return -1;
  auto it = lookup_.find(key_of(idx));
  return it == lookup_.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
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
  return true;
}

std::vector<std::size_t> ParameterSpace::neighbours(std::size_t i) const {
  std::vector<std::size_t> out;
  std::vector<std::uint16_t> idx = configs_.at(i);
  for (std::size_t p = 0; p < params_.size(); ++p) {
    std::uint16_t orig = idx[p];
    for (std::uint16_t k = 0; k < params_[p].values.size(); ++k) {
      if (k == orig) continue;
      idx[p] = k;
      auto f = find_indices(idx);
      if (f >= 0) out.push_back(static_cast<std::size_t>(f));
    }
    idx[p] = orig;
  }
  return out;
}

std::vector<std::size_t> ParameterSpace::adjacent(std::size_t i) const {
  std::vector<std::size_t> out;
  std::vector<std::uint16_t> idx = configs_.at(i);
  for (std::size_t p = 0; p < params_.size(); ++p) {
    std::uint16_t orig = idx[p];
    for (int delta : {-1, 1}) {
      int k = static_cast<int>(orig) + delta;
      if (k < 0 || k >= static_cast<int>(params_[p].values.size())) continue;
      idx[p] = static_cast<std::uint16_t>(k);
      auto f = find_indices(idx);
      if (f >= 0) out.push_back(static_cast<std::size_t>(f));
    }
    idx[p] = orig;
  }
  return out;
}

std::ptrdiff_t ParameterSpace::default_index() const {
  Config c;
  for (const auto& p : params_) c.set(p.name, p.default_value);
  return find(c);
}

}  // namespace autotune
