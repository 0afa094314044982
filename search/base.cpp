#include "search/base.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "tuner/core/error.hpp"

namespace autotune::search::detail {

// ---------------------------------------------------------------------------------------------
// Options

namespace {

bool parse_integer(const std::string& text, std::int64_t& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  out = v;
  return true;
}

bool parse_real(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

bool parse_boolean(const std::string& text, bool& out) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "true" || t == "1" || t == "yes" || t == "on") {
    out = true;
    return true;
  }
  if (t == "false" || t == "0" || t == "no" || t == "off") {
    out = false;
    return true;
  }
  return false;
}

std::string format_bound(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string describe_expected(const OptionSpec& spec) {
  switch (spec.kind) {
    case OptionKind::boolean:
      return "true or false";
    case OptionKind::choice: {
      std::string r = "one of";
      for (std::size_t i = 0; i < spec.choices.size(); ++i) r += (i ? ", " : " ") + spec.choices[i];
      return r;
    }
    case OptionKind::integer:
    case OptionKind::real: {
      std::string r = spec.kind == OptionKind::integer ? "an integer" : "a number";
      const bool lo = std::isfinite(spec.min), hi = std::isfinite(spec.max);
      if (lo && hi) r += " in [" + format_bound(spec.min) + ", " + format_bound(spec.max) + "]";
      else if (lo) r += " >= " + format_bound(spec.min);
      else if (hi) r += " <= " + format_bound(spec.max);
      return r;
    }
  }
  return "a value";
}

bool valid_value(const OptionSpec& spec, const std::string& text) {
  switch (spec.kind) {
    case OptionKind::integer: {
      std::int64_t v = 0;
      return parse_integer(text, v) && static_cast<double>(v) >= spec.min && static_cast<double>(v) <= spec.max;
    }
    case OptionKind::real: {
      double v = 0;
      return parse_real(text, v) && v >= spec.min && v <= spec.max;
    }
    case OptionKind::boolean: {
      bool v = false;
      return parse_boolean(text, v);
    }
    case OptionKind::choice:
      return std::find(spec.choices.begin(), spec.choices.end(), text) != spec.choices.end();
  }
  return false;
}

}  // namespace

OptionReader::OptionReader(const std::string& strategy, const std::vector<OptionSpec>& specs,
                           const Options& given)
    : strategy_(strategy) {
  for (const auto& [key, text] : given) {
    const std::string& name = key;  // a structured binding cannot be captured by a lambda in C++17
    auto it = std::find_if(specs.begin(), specs.end(), [&name](const OptionSpec& s) { return s.name == name; });
    if (it == specs.end()) {
      std::string valid;
      for (const auto& s : specs) valid += (valid.empty() ? "" : ", ") + s.name;
      throw UsageError("unknown option '" + key + "' for strategy '" + strategy + "' (" +
                       (valid.empty() ? std::string("it takes no options") : "valid options: " + valid) + ")");
    }
    if (!valid_value(*it, text)) {
      throw UsageError("bad value '" + text + "' for option '" + key + "' of strategy '" + strategy +
                       "': expected " + describe_expected(*it));
    }
  }
  for (const auto& s : specs) {
    auto it = given.find(s.name);
    values_[s.name] = it != given.end() ? it->second : s.default_value;
  }
}

const std::string& OptionReader::raw(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("strategy '" + strategy_ + "' reads undeclared option " + name);
  return it->second;
}

std::int64_t OptionReader::integer(const std::string& name) const {
  std::int64_t v = 0;
  if (!parse_integer(raw(name), v)) throw std::logic_error("option " + name + " is not an integer");
  return v;
}

double OptionReader::real(const std::string& name) const {
  double v = 0;
  if (!parse_real(raw(name), v)) throw std::logic_error("option " + name + " is not a number");
  return v;
}

bool OptionReader::boolean(const std::string& name) const {
  bool v = false;
  if (!parse_boolean(raw(name), v)) throw std::logic_error("option " + name + " is not a boolean");
  return v;
}

const std::string& OptionReader::choice(const std::string& name) const { return raw(name); }

// ---------------------------------------------------------------------------------------------
// Geometry

struct NearestValid::Search {
  std::vector<double> target;  // per parameter
  Rng* rng = nullptr;
  std::size_t block = 0;
  std::size_t best = kNone;    // row of the block
  std::size_t ties = 0;
  double best_d = kInf;

  void consider(std::size_t row, double dist) {
    if (dist < best_d - 1e-12) {
      best_d = dist;
      best = row;
      ties = 1;
    } else if (dist <= best_d + 1e-12) {
      ++ties;
      if (rng->below(ties) == 0) best = row;
    }
  }
};

NearestValid::NearestValid(const ParameterSpace& space) : space_(space) {
  for (const Param& p : space.params()) {
    const double top = static_cast<double>(p.values.size()) - 1.0;
    scale2_.push_back(top > 0 ? 1.0 / (top * top) : 0.0);
  }
}

std::size_t NearestValid::operator()(const std::vector<double>& target, Rng& rng) const {
  const auto& params = space_.params();
  Search s;
  s.rng = &rng;
  s.target.resize(params.size());
  for (std::size_t j = 0; j < params.size(); ++j) {
    const double top = static_cast<double>(params[j].values.size()) - 1.0;
    const double v = j < target.size() && std::isfinite(target[j]) ? target[j] : 0.0;
    s.target[j] = std::min(std::max(v, 0.0), std::max(top, 0.0));
  }
  // The distance is a sum over parameters, so the nearest config is the nearest row of every block.
  std::size_t index = 0;
  for (std::size_t b = 0; b < space_.block_count(); ++b) {
    s.block = b;
    s.best = kNone;
    s.ties = 0;
    s.best_d = kInf;
    descend(s, 0, 0, space_.block_size(b), 0.0);
    index += s.best * space_.block_stride(b);
  }
  return index;
}

void NearestValid::descend(Search& s, std::size_t column, std::size_t lo, std::size_t hi, double partial) const {
  const auto& columns = space_.block_params(s.block);
  if (column == columns.size()) {
    for (std::size_t i = lo; i < hi; ++i) s.consider(i, partial);
    return;
  }
  const std::size_t param = columns[column];
  const double t = s.target[param];
  const double scale2 = scale2_[param];
  const long count = static_cast<long>(space_.params()[param].values.size());
  // Values in order of increasing distance from t: walk outwards from floor(t) and floor(t) + 1.
  long left = std::min(static_cast<long>(std::floor(t)), count - 1);
  long right = left + 1;
  auto column_less = [&](std::size_t row, long v) { return space_.block_value(s.block, row, column) < v; };
  while (left >= 0 || right < count) {
    long v;
    // The right side when the left is used up, or when both remain and the right value is nearer.
    const bool take_right =
        left < 0 || (right < count && t - static_cast<double>(left) > static_cast<double>(right) - t);
    if (take_right) v = right++;
    else v = left--;
    const double dv = (static_cast<double>(v) - t) * (static_cast<double>(v) - t) * scale2;
    if (partial + dv > s.best_d + 1e-12) {
      // Every value further out in this direction is worse; finish the other direction only.
      if (static_cast<double>(v) <= t) left = -1;
      else right = count;
      continue;
    }
    // Rows in [lo, hi) share the prefix above; their values in this column are sorted.
    std::size_t a = lo, n = hi - lo;
    while (n > 0) {  // lower_bound of v
      const std::size_t half = n / 2;
      if (column_less(a + half, v)) {
        a += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    std::size_t b = a;
    n = hi - a;
    while (n > 0) {  // upper_bound of v
      const std::size_t half = n / 2;
      if (column_less(b + half, v + 1)) {
        b += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    if (a < b) descend(s, column + 1, a, b, partial + dv);
  }
}

namespace {

/// Ranks 1..n of v, ties at their mean rank.
std::vector<double> mean_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&v](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t lo = 0; lo < order.size();) {
    std::size_t hi = lo + 1;
    while (hi < order.size() && v[order[hi]] == v[order[lo]]) ++hi;
    const double mean = (static_cast<double>(lo + hi) + 1.0) / 2.0;  // ranks lo+1 .. hi
    for (std::size_t k = lo; k < hi; ++k) rank[order[k]] = mean;
    lo = hi;
  }
  return rank;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.size() != b.size() || a.size() < 3) return nan;
  const std::vector<double> ra = mean_ranks(a), rb = mean_ranks(b);
  const double mean = (static_cast<double>(a.size()) + 1.0) / 2.0;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (saa <= 0 || sbb <= 0) return nan;
  return sab / std::sqrt(saa * sbb);
}

double trust_from_correlation(double rho, std::size_t overlap) {
  if (overlap < kMinTrustOverlap || !std::isfinite(rho)) return 0.0;
  const double chance = 1.0 / std::sqrt(static_cast<double>(overlap) - 1.0);
  return rho > chance ? std::min(1.0, rho) : 0.0;
}

double worsening(double next, double current) {
  if (next == current) return 0.0;
  if (std::isinf(next) && next > 0) return kInf;
  if (std::isinf(current) && current > 0) return -kInf;
  if (next > 0 && current > 0) return std::log(next / current);
  return (next - current) / std::max(std::fabs(current), 1e-300);
}

// ---------------------------------------------------------------------------------------------
// StrategyBase

StrategyBase::StrategyBase(std::string name, const ParameterSpace& space, std::uint64_t seed)
    : space_(space),
      rng_(seed),
      name_(std::move(name)),
      values_(space.size(), kInf),
      known_(space.size(), 0),
      pending_(space.size(), 0),
      pool_(space.size()),
      pool_pos_(space.size()) {
  for (std::size_t i = 0; i < space.size(); ++i) {
    pool_[i] = i;
    pool_pos_[i] = i;
  }
}

std::size_t StrategyBase::nearest(const std::vector<double>& target) {
  if (!nearest_) nearest_ = std::make_unique<NearestValid>(space_);
  return (*nearest_)(target, rng_);
}

void StrategyBase::remove_from_pool(std::size_t i) {
  const std::size_t p = pool_pos_[i];
  if (p == kNone) return;
  const std::size_t last = pool_.back();
  pool_[p] = last;
  pool_pos_[last] = p;
  pool_.pop_back();
  pool_pos_[i] = kNone;
}

void StrategyBase::drop_outstanding() {
  for (std::size_t i : outstanding_) pending_[i] = 0;
  outstanding_.clear();
}

std::size_t StrategyBase::random_unknown() {
  if (pool_.empty()) return kNone;
  for (int attempt = 0; attempt < 32; ++attempt) {
    const std::size_t i = pool_[rng_.below(pool_.size())];
    if (!pending_[i]) return i;
  }
  const std::size_t start = rng_.below(pool_.size());
  for (std::size_t k = 0; k < pool_.size(); ++k) {
    const std::size_t i = pool_[(start + k) % pool_.size()];
    if (!pending_[i]) return i;
  }
  return kNone;
}

std::vector<std::size_t> StrategyBase::random_unknowns(std::size_t k) {
  std::vector<std::size_t> out;
  if (k == 0) return out;
  if (k * 2 >= pool_.size()) {
    for (std::size_t i : pool_)
      if (!pending_[i]) out.push_back(i);
    std::sort(out.begin(), out.end());  // pool order depends on history; make the draw depend only on the set
    rng_.shuffle(out);
    if (out.size() > k) out.resize(k);
    return out;
  }
  // Mark chosen ones as pending temporarily so random_unknown() does not pick them twice.
  while (out.size() < k) {
    const std::size_t i = random_unknown();
    if (i == kNone) break;
    pending_[i] = 1;
    out.push_back(i);
  }
  for (std::size_t i : out) pending_[i] = 0;
  return out;
}

std::vector<std::size_t> StrategyBase::propose(std::size_t n) {
  std::vector<std::size_t> out;
  if (n == 0 || pool_.empty()) return out;
  int idle = 0;
  while (out.size() < n) {
    if (queue_.empty()) {
      if (!out.empty() && !independent_steps()) break;  // the next step needs these results first
      if (out.empty() && !outstanding_.empty()) drop_outstanding();
      if (idle >= kMaxIdleSteps) break;
      std::vector<std::size_t> s = step(n - out.size());
      ++idle;
      if (s.empty()) break;
      queue_.insert(queue_.end(), s.begin(), s.end());
      continue;
    }
    const std::size_t c = queue_.front();
    queue_.pop_front();
    if (c >= size() || known_[c] || pending_[c]) continue;
    out.push_back(c);
    pending_[c] = 1;
    outstanding_.push_back(c);
    idle = 0;
  }
  if (out.empty()) {
    // The algorithm is stuck on known configs or has nothing to say: keep making progress.
    for (std::size_t c : random_unknowns(n)) {
      out.push_back(c);
      pending_[c] = 1;
      outstanding_.push_back(c);
    }
  }
  return out;
}

std::vector<std::size_t> StrategyBase::upcoming(std::size_t n) const {
  std::vector<std::size_t> out;
  for (std::size_t c : queue_) {
    if (out.size() >= n) return out;
    if (c < size() && !known_[c] && !pending_[c] && std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  }
  if (out.size() < n) {
    for (std::size_t c : independent_steps() ? peek(n - out.size()) : guess(n - out.size()))
      if (c < size() && !known_[c] && !pending_[c] && std::find(out.begin(), out.end(), c) == out.end())
        out.push_back(c);
  }
  return out;
}

void StrategyBase::warm_start(const std::vector<std::size_t>& indices) {
  WarmStartHint hint;
  hint.indices = indices;
  warm_start(hint);
}

void StrategyBase::warm_start(const WarmStartHint& hint) {
  if (!hint.source_values.empty()) {
    source_.assign(size(), std::numeric_limits<double>::quiet_NaN());
    for (const auto& [i, v] : hint.source_values)
      if (i < size() && std::isnan(source_[i])) source_[i] = v;
  }
  warm_distance_ = std::isfinite(hint.distance) ? std::max(0.0, hint.distance) : 0.0;
  std::vector<std::size_t> added;
  for (std::size_t i : hint.indices) {
    if (i >= size() || std::find(warm_.begin(), warm_.end(), i) != warm_.end()) continue;
    warm_.push_back(i);
    added.push_back(i);
  }
  added.resize(std::min(added.size(), warm_upfront(added.size())));
  queue_front(added);
}

void StrategyBase::queue_front(const std::vector<std::size_t>& indices) {
  queue_.insert(queue_.begin(), indices.begin(), indices.end());
}

double StrategyBase::source_correlation(std::size_t& overlap) const {
  std::vector<double> here, there;
  if (!source_.empty()) {
    for (std::size_t i : observed_) {
      if (!std::isfinite(values_[i]) || !std::isfinite(source_[i])) continue;
      here.push_back(values_[i]);
      there.push_back(source_[i]);
    }
  }
  overlap = here.size();
  return spearman(here, there);
}

WarmTrust StrategyBase::warm_trust() const {
  WarmTrust t;
  t.given = warm_.size();
  if (warm_.empty() && source_.empty()) return t;
  for (std::size_t i : warm_) t.measured += known_[i] ? 1 : 0;
  t.correlation = source_correlation(t.overlap);
  warm_trust_level(t);
  return t;
}

std::size_t StrategyBase::best_warm_point() const {
  std::size_t best = kNone;
  for (std::size_t i : warm_)
    if (best == kNone || value(i) < value(best)) best = i;
  return best;
}

std::vector<std::size_t> StrategyBase::initial_population(std::size_t k) {
  std::vector<std::size_t> out = warm_;
  std::stable_sort(out.begin(), out.end(), [this](std::size_t a, std::size_t b) { return value(a) < value(b); });
  if (out.size() > k) out.resize(k);
  // Hide unknown warm points from the random draw so that none is picked twice.
  std::vector<std::size_t> hidden;
  for (std::size_t i : out)
    if (!known_[i] && !pending_[i]) {
      pending_[i] = 1;
      hidden.push_back(i);
    }
  for (std::size_t c : random_unknowns(k - out.size())) out.push_back(c);
  for (std::size_t i : hidden) pending_[i] = 0;
  return out;
}

void StrategyBase::observe(const std::vector<Observation>& results) {
  for (const Observation& r : results) {
    if (r.index >= size()) {
      throw UsageError("strategy '" + name_ + "': observation for index " + std::to_string(r.index) +
                       " outside the space of " + std::to_string(size()) + " configs");
    }
    const std::size_t i = r.index;
    if (pending_[i]) {
      pending_[i] = 0;
      auto it = std::find(outstanding_.begin(), outstanding_.end(), i);
      if (it != outstanding_.end()) outstanding_.erase(it);
    }
    if (known_[i]) continue;  // first result wins (a repeat comes from the session's cache)
    const double v = std::isnan(r.value) ? kInf : r.value;
    known_[i] = 1;
    values_[i] = v;
    remove_from_pool(i);
    observed_.push_back(i);
  }
}

}  // namespace autotune::search::detail
