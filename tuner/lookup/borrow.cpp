// Level borrowed (docs/lookup.md, "Borrowing"): for a workload with nothing usable recorded, the best configuration
// of the most similar other workload of the kernel measured on the same device, at its recorded problem nearest to
// the question, where it is valid for the workload asked for.
#include <algorithm>
#include <map>

#include "tuner/core/error.hpp"
#include "tuner/lookup/levels.hpp"

namespace autotune::lookup::detail {

namespace {

/// Operator classes: an operation's last word ("exclusive_max" -> "max") mapped to its class; a word not listed is
/// its own class. Sums and products combine values arithmetically; the others select one of them.
const std::map<std::string, std::string>& classes() {
  static const std::map<std::string, std::string> table = {
      {"sum", "arithmetic"}, {"prod", "arithmetic"}, {"min", "extremum"},
      {"max", "extremum"},   {"minmag", "extremum"}, {"maxmag", "extremum"},
  };
  return table;
}

std::string last_word(const std::string& op) {
  const std::size_t u = op.rfind('_');
  return u == std::string::npos ? op : op.substr(u + 1);
}

/// Element size of a dtype; 0 where the dtype is not one of the known scalar types.
int element_size(const std::string& dtype) {
  try {
    return dtype_size(dtype);
  } catch (const Error&) {
    return 0;
  }
}

/// How far workload d is from w (lower: more similar): element size, then operator class, then dtype, then the
/// operation's last word.
int distance(const Workload& w, const Workload& d) {
  const int size_w = element_size(w.dtype), size_d = element_size(d.dtype);
  const bool same_size = w.dtype == d.dtype || (size_w != 0 && size_w == size_d);
  return (same_size ? 0 : 8) + (operator_class(w.op) == operator_class(d.op) ? 0 : 4) + (w.dtype == d.dtype ? 0 : 2) +
         (last_word(w.op) == last_word(d.op) ? 0 : 1);
}

std::string why_similar(const Workload& w, const Workload& d) {
  const int size_w = element_size(w.dtype);
  const bool same_size = w.dtype == d.dtype || (size_w != 0 && size_w == element_size(d.dtype));
  const bool same_class = operator_class(w.op) == operator_class(d.op);
  if (same_size && same_class) return "same element size and operator class";
  if (same_size) return "same element size";
  if (same_class) return "same operator class";
  return "another workload of the kernel";
}

}  // namespace

std::string operator_class(const std::string& op) {
  const std::string word = last_word(op);
  auto it = classes().find(word);
  return it == classes().end() ? word : it->second;
}

std::vector<Workload> donors(const TuningSpec& spec, const Workload& w) {
  std::vector<Workload> out;
  for (const Workload& d : spec.workloads)
    if (!(d == w)) out.push_back(d);
  // Stable: equally similar workloads keep the spec's order.
  std::stable_sort(out.begin(), out.end(),
                   [&](const Workload& x, const Workload& y) { return distance(w, x) < distance(w, y); });
  return out;
}

bool borrow(const Question& q, const DeviceInfo* props, Answer& a, std::vector<std::string>& notes) {
  if (q.others == nullptr) return false;
  bool measured = false;  // another workload has rows on this device
  for (const Workload& d : donors(q.spec, q.w)) {
    const std::shared_ptr<Prepared> prep = (*q.others)(d);
    if (!prep) continue;
    std::size_t board = prep->boards.size();
    for (std::size_t b = 0; b < prep->boards.size(); ++b)
      if (prep->boards[b].key == q.device) board = b;
    if (board == prep->boards.size()) continue;
    std::vector<const Cell*> cells;
    for (const Cell& c : prep->cells)
      if (c.board == board && !c.rows.empty()) cells.push_back(&c);
    if (cells.empty()) continue;
    measured = true;
    std::stable_sort(cells.begin(), cells.end(),
                     [&](const Cell* x, const Cell* y) { return closer(*x, *y, q.problem); });
    const DeviceInfo& target = props != nullptr ? *props : prep->boards[board].info;
    for (const Cell* c : cells) {
      for (std::size_t ri : c->rows) {  // fastest first
        const Row& r = prep->rows[ri];
        if (!valid_for(q.spec, r.config, q.problem, target, q.w)) continue;
        fill_from_row(a, *prep, r, Match::borrowed);
        a.borrowed_from = d.key();
        notes.push_back("borrowed from " + d.key() + " at " + r.problem_key + " (" + why_similar(q.w, d) +
                        "): nothing of " + q.w.key() + " is usable here");
        return true;
      }
    }
  }
  notes.push_back(measured ? "no configuration recorded on " + q.device.str() +
                                 " for another workload of the kernel is valid for " + q.w.key()
                           : "no other workload of the kernel recorded on " + q.device.str());
  return false;
}

}  // namespace autotune::lookup::detail
