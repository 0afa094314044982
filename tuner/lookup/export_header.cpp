// Compiled-in export (export.hpp): the tables as a self-contained C++17 header with its selector.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "tuner/core/error.hpp"
#include "tuner/lookup/export.hpp"

namespace autotune::lookup {

// ---- C++ header -----------------------------------------------------------------------------------------

namespace {

/// `s` as a C++ string literal (octal escapes: they end after three digits, whatever follows).
std::string literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(c));
      out += buf;
    }
  }
  return out + "\"";
}

/// A double as an exact hexadecimal literal.
std::string hex_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

std::string int_literal(std::int64_t v) {
  if (v == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807 - 1)";
  return std::to_string(v);
}

bool cpp_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// The parts of a namespace name `a::b`; UsageError unless each is a C++ identifier.
std::vector<std::string> namespace_parts(const std::string& ns) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t sep = ns.find("::", start);
    parts.push_back(ns.substr(start, sep == std::string::npos ? std::string::npos : sep - start));
    if (!cpp_identifier(parts.back()))
      throw UsageError("namespace '" + ns + "' is not a C++ namespace name (identifiers joined by ::)");
    if (sep == std::string::npos) return parts;
    start = sep + 2;
  }
}

// The header's fixed parts. Names and rules mirror tuner/lookup/lookup.cpp (Closeness, log_distance, the
// levels); tests/cpu/test_export.cpp compiles the header and compares its answers with the library's.
constexpr const char* kTypes = R"hdr(
/// What a parameter's values are: integer (the value is the number), else floating, string or boolean values
/// stored as codes 0, 1, ... with their text.
enum class Kind : int { integer, floating, string, boolean };

/// One parameter of a configuration: the kernel is compiled with -D<name>=<text>.
struct Value {
  const char* name;
  std::int64_t value;  // the number (integer parameters), else the code of the value
  const char* text;    // what follows -D<name>= (the number as text for integer parameters)
  const char* label;   // the value's label (e.g. a variant's name), else the number as text
  Kind kind;
};

/// A configuration: its parameters, sorted by name.
struct Config {
  const Value* values;
  int size;
  /// The parameter called `name`, or nullptr.
  const Value* find(std::string_view name) const noexcept {
    for (int i = 0; i < size; ++i)
      if (name == values[i].name) return &values[i];
    return nullptr;
  }
};

/// How far the answer is from the question, as autotune::lookup::Match: its value is the match level.
enum class Match : int { exact = 0, nearest_size = 1, same_cc = 2, same_arch = 3, borrowed = 4, spec_default = 5 };

namespace detail {

struct Problem {
  const std::int64_t* dims;  // in the kernel's order of dimensions
  const double* log2_dims;   // log2(max(1, size)), dimensions sorted by name
  double elements;           // product of the sizes
  double log2_elements;      // log2(max(1, elements))
  const char* data;          // data tag of file inputs ("" for generated inputs)
  const char* key;           // problem key, e.g. "n=1048576"
};
struct Fill {  // nearest_size's fill rule: questions whose dimension fill_dim reaches `from` get `config`
  std::int64_t from;
  const Config* config;
};
struct Entry {
  const Problem* problem;
  const Config* config;
  int fill_dim;       // position in the kernel's dims of the dimension the fills follow
  const Fill* fills;  // sizes decreasing
  int nfills;
};
struct Board {
  const char* name;  // normalised
  int cc;
  const Entry* cells;    // exact, nearest_size
  int ncells;
  const Entry* same_cc;  // same_cc: other boards of this cc
  int nsame_cc;
  const Config* same_arch;  // same_arch: other boards of this major architecture (nullptr: none)
  const Entry* borrowed;    // borrowed: the cells of another workload on this board, each with what it serves
  int nborrowed;
  const char* borrowed_from;  // that workload's key ("" where nborrowed is 0)
};
struct CcGroup {  // unrecorded boards of this cc
  int cc;
  const Entry* entries;
  int size;
};
struct ArchGroup {  // unrecorded boards of this major architecture
  int major;
  const Config* config;
};
struct WorkloadTable {
  const char* key;  // "float32/sum"
  const Board* boards;
  int nboards;
  const CcGroup* cc_groups;
  int ncc_groups;
  const ArchGroup* arch_groups;
  int narch_groups;
};
struct KernelTable {
  const char* name;
  const char* const* dims;  // the order select() takes them in
  const int* by_name;       // by_name[i]: the position in `dims` of the i-th dimension sorted by name
  int ndims;
  const Config* spec_default;
  const WorkloadTable* workloads;
  int nworkloads;
};
)hdr";

constexpr const char* kSelector = R"hdr(
inline bool is_alnum(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

struct Question {
  const std::int64_t* dims;
  int ndims;
  double log2_dims[kMaxDims];  // sorted by name
  double log2_elements;
  std::string_view data;
};

inline Question question(const KernelTable& k, const std::int64_t* dims, std::string_view data) noexcept {
  Question q{dims, k.ndims, {}, 0, data};
  double elements = 1;
  for (int i = 0; i < k.ndims; ++i) {
    const double size = static_cast<double>(dims[k.by_name[i]]);
    q.log2_dims[i] = std::log2(size > 1.0 ? size : 1.0);
    elements *= size;
  }
  q.log2_elements = std::log2(elements > 1.0 ? elements : 1.0);
  return q;
}

struct Closeness {
  bool other_data;
  double dist;
  double elem_dist;
  double elements;
  const char* key;
};

inline Closeness closeness(const Problem& p, const Question& q) noexcept {
  double d = 0;
  for (int i = 0; i < q.ndims; ++i) d += std::fabs(p.log2_dims[i] - q.log2_dims[i]);
  return {q.data != std::string_view(p.data), d, std::fabs(p.log2_elements - q.log2_elements), p.elements, p.key};
}

/// Problems of the question's data first, then by the sum of the log2 distances of the dimensions, then of the
/// element counts, then the larger problem, then the key.
inline bool closer(const Closeness& a, const Closeness& b) noexcept {
  if (a.other_data != b.other_data) return !a.other_data;
  if (a.dist < b.dist || a.dist > b.dist) return a.dist < b.dist;
  if (a.elem_dist < b.elem_dist || a.elem_dist > b.elem_dist) return a.elem_dist < b.elem_dist;
  if (a.elements < b.elements || a.elements > b.elements) return a.elements > b.elements;
  return std::string_view(a.key) < std::string_view(b.key);
}

inline const Entry* nearest(const Entry* entries, int n, const Question& q) noexcept {
  const Entry* best = nullptr;
  Closeness best_cl{};
  for (int i = 0; i < n; ++i) {
    const Closeness cl = closeness(*entries[i].problem, q);
    if (best == nullptr || closer(cl, best_cl)) {
      best = &entries[i];
      best_cl = cl;
    }
  }
  return best;
}

/// The configuration of `e` at the question's problem (docs/lookup.md, "Filling the SMs"): the first of its fills
/// whose size the question reaches, else the entry's configuration (also where the question is the entry's problem:
/// the first fill's size is at most the entry's).
inline const Config* filling(const Entry& e, const Question& q) noexcept {
  for (int i = 0; i < e.nfills; ++i)
    if (q.dims[e.fill_dim] >= e.fills[i].from) return e.fills[i].config;
  return e.config;
}

inline bool same_problem(const Problem& p, const Question& q) noexcept {
  for (int i = 0; i < q.ndims; ++i)
    if (p.dims[i] != q.dims[i]) return false;
  return q.data == std::string_view(p.data);
}

inline const KernelTable* find_kernel(std::string_view name) noexcept {
  for (int i = 0; i < nkernels; ++i)
    if (name == kernels[i].name) return &kernels[i];
  return nullptr;
}

}  // namespace detail

/// True if `name` normalised as the lookup library normalises device names (ASCII letters lower-cased, each
/// run of other characters one '_', none at either end: "NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3") is
/// `normalised`. A normalised name normalises to itself.
inline bool same_device_name(std::string_view name, std::string_view normalised) noexcept {
  std::size_t n = 0;
  bool sep = false;
  for (char c : name) {
    if (!detail::is_alnum(c)) {
      sep = true;
      continue;
    }
    if (sep && n != 0) {
      if (n >= normalised.size() || normalised[n] != '_') return false;
      ++n;
    }
    const char lower = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    if (n >= normalised.size() || normalised[n] != lower) return false;
    ++n;
    sep = false;
  }
  return n == normalised.size();
}

/// The best configuration of `kernel` for `workload` (a workload key: "float32/sum", or "float32" without an
/// operation) on the device `device_name` (as the driver reports it, or normalised) of compute capability `cc`
/// (major * 10 + minor) at the problem `dims` (`ndims` sizes in the order dims() gives; `data`: the data tag of
/// file inputs, "" for generated ones). The answer is the lookup library's Lookup::best(kernel, workload,
/// DeviceKey(device_name, cc), problem) on the exported database, with its level in *match_level (Match: 0 exact
/// ... 5 spec_default) when match_level is not null. nullptr (and level -1) for a kernel or workload that was
/// not exported or a wrong number of dimensions. Allocates nothing; thread-safe.
inline const Config* select(std::string_view kernel, std::string_view workload, std::string_view device_name, int cc,
                            const std::int64_t* dims, int ndims, int* match_level,
                            std::string_view data = {}) noexcept {
  if (match_level != nullptr) *match_level = -1;
  const detail::KernelTable* k = detail::find_kernel(kernel);
  if (k == nullptr || ndims != k->ndims || (ndims > 0 && dims == nullptr)) return nullptr;
  const detail::WorkloadTable* w = nullptr;
  for (int i = 0; i < k->nworkloads && w == nullptr; ++i)
    if (workload == k->workloads[i].key) w = &k->workloads[i];
  if (w == nullptr) return nullptr;
  const detail::Question q = detail::question(*k, dims, data);
  const detail::Board* board = nullptr;
  for (int i = 0; i < w->nboards && board == nullptr; ++i)
    if (w->boards[i].cc == cc && same_device_name(device_name, w->boards[i].name)) board = &w->boards[i];
  Match m = Match::spec_default;
  const Config* c = k->spec_default;
  if (board != nullptr) {
    if (board->ncells > 0) {
      const detail::Entry* e = detail::nearest(board->cells, board->ncells, q);
      m = detail::same_problem(*e->problem, q) ? Match::exact : Match::nearest_size;
      c = detail::filling(*e, q);
    } else if (board->nsame_cc > 0) {
      m = Match::same_cc;
      c = detail::filling(*detail::nearest(board->same_cc, board->nsame_cc, q), q);
    } else if (board->same_arch != nullptr) {
      m = Match::same_arch;
      c = board->same_arch;
    } else if (board->nborrowed > 0) {
      m = Match::borrowed;
      c = detail::nearest(board->borrowed, board->nborrowed, q)->config;
    }
  } else {
    const detail::CcGroup* g = nullptr;
    for (int i = 0; i < w->ncc_groups && g == nullptr; ++i)
      if (w->cc_groups[i].cc == cc) g = &w->cc_groups[i];
    const detail::ArchGroup* a = nullptr;
    for (int i = 0; i < w->narch_groups && a == nullptr; ++i)
      if (w->arch_groups[i].major == cc / 10) a = &w->arch_groups[i];
    if (g != nullptr) {
      m = Match::same_cc;
      c = detail::filling(*detail::nearest(g->entries, g->size, q), q);
    } else if (a != nullptr) {
      m = Match::same_arch;
      c = a->config;
    }
  }
  if (match_level != nullptr) *match_level = static_cast<int>(m);
  return c;
}

/// select() with the sizes in a list: select("transpose", "float32", name, cc, {rows, cols}, &level).
inline const Config* select(std::string_view kernel, std::string_view workload, std::string_view device_name, int cc,
                            std::initializer_list<std::int64_t> dims, int* match_level,
                            std::string_view data = {}) noexcept {
  return select(kernel, workload, device_name, cc, dims.begin(), static_cast<int>(dims.size()), match_level, data);
}

/// The spec's default configuration of `kernel` (level spec_default); nullptr for a kernel not exported.
inline const Config* spec_default(std::string_view kernel) noexcept {
  const detail::KernelTable* k = detail::find_kernel(kernel);
  return k == nullptr ? nullptr : k->spec_default;
}

/// The problem dimensions select() takes for `kernel`, in order, and their number in *count; nullptr (count 0)
/// for a kernel not exported.
inline const char* const* dims(std::string_view kernel, int* count) noexcept {
  const detail::KernelTable* k = detail::find_kernel(kernel);
  if (count != nullptr) *count = k == nullptr ? 0 : k->ndims;
  return k == nullptr ? nullptr : k->dims;
}

/// "exact", "nearest_size", "same_cc", "same_arch", "borrowed", "spec_default" for levels 0 ... 5, else "none".
inline const char* match_name(int level) noexcept {
  constexpr const char* names[] = {"exact", "nearest_size", "same_cc", "same_arch", "borrowed", "spec_default"};
  return level >= 0 && level <= 5 ? names[level] : "none";
}
)hdr";

/// Writes the tables of the header: every array in namespace detail, named k<kernel>_...
class HeaderTables {
 public:
  explicit HeaderTables(std::string& out) : out_(out) {}

  void kernel(const ExportKernel& k, std::size_t ki) {
    const std::string p = "k" + std::to_string(ki) + "_";
    std::vector<std::size_t> by_name(k.dims.size());
    for (std::size_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
    std::sort(by_name.begin(), by_name.end(), [&](std::size_t a, std::size_t b) { return k.dims[a] < k.dims[b]; });
    if (!k.dims.empty()) {
      line("inline constexpr const char* " + p + "dims[] = {" +
           join(k.dims, [](const std::string& d) { return literal(d); }) + "};");
      line("inline constexpr int " + p + "by_name[] = {" +
           join(by_name, [](std::size_t i) { return std::to_string(i); }) + "};");
    }
    configs(k, p);
    problems(k, p, by_name);
    for (std::size_t wi = 0; wi < k.workloads.size(); ++wi)
      workload(k.workloads[wi], p + "w" + std::to_string(wi) + "_", p, k.dims);
    std::vector<std::string> ws;
    for (std::size_t wi = 0; wi < k.workloads.size(); ++wi) {
      const ExportWorkload& w = k.workloads[wi];
      const std::string q = p + "w" + std::to_string(wi) + "_";
      ws.push_back("{" + literal(w.workload.key()) + ", " + array_or_null(q + "boards", w.boards.size()) + ", " +
                   std::to_string(w.boards.size()) + ", " + array_or_null(q + "cc", w.cc_groups.size()) + ", " +
                   std::to_string(w.cc_groups.size()) + ", " + array_or_null(q + "arch", w.arch_groups.size()) + ", " +
                   std::to_string(w.arch_groups.size()) + "}");
    }
    if (!ws.empty()) array("WorkloadTable", p + "workloads", ws);
    kernels_.push_back("{" + literal(k.name) + ", " + array_or_null(p + "dims", k.dims.size()) + ", " +
                       array_or_null(p + "by_name", k.dims.size()) + ", " + std::to_string(k.dims.size()) + ", &" + p +
                       "configs[" + std::to_string(k.spec_default) + "], " + array_or_null(p + "workloads", ws.size()) +
                       ", " + std::to_string(ws.size()) + "}");
  }

  void finish() {
    if (kernels_.empty()) {
      line("inline constexpr const KernelTable* kernels = nullptr;");
    } else {
      array("KernelTable", "kernel_list", kernels_);
      line("inline constexpr const KernelTable* kernels = kernel_list;");
    }
    line("inline constexpr int nkernels = " + std::to_string(kernels_.size()) + ";");
  }

 private:
  template <class T, class F>
  static std::string join(const std::vector<T>& v, F f) {
    std::string s;
    for (const T& x : v) s += (s.empty() ? "" : ", ") + f(x);
    return s;
  }
  static std::string array_or_null(const std::string& name, std::size_t n) { return n == 0 ? "nullptr" : name; }

  void line(const std::string& s) { out_ += s + "\n"; }
  void array(const std::string& type, const std::string& name, const std::vector<std::string>& items) {
    out_ += "inline constexpr " + type + " " + name + "[] = {\n";
    for (const std::string& it : items) out_ += "    " + it + ",\n";
    out_ += "};\n";
  }

  void configs(const ExportKernel& k, const std::string& p) {
    std::vector<std::string> cs;
    for (std::size_t ci = 0; ci < k.configs.size(); ++ci) {
      const Config& c = k.configs[ci];
      std::vector<std::string> vs;
      for (const auto& [name, v] : c.values()) {
        const ExportParam* param = nullptr;
        for (const ExportParam& ep : k.params)
          if (ep.name == name) param = &ep;
        const ExportParam plain{name, Param::Kind::integer, {}, {}};
        const ExportParam& ep = param ? *param : plain;
        vs.push_back("{" + literal(name) + ", " + int_literal(v) + ", " + literal(ep.text(v)) + ", " +
                     literal(ep.label(v)) + ", Kind::" + param_kind_name(ep.kind) + "}");
      }
      const std::string name = p + "c" + std::to_string(ci);
      if (!vs.empty()) array("Value", name, vs);
      cs.push_back("{" + array_or_null(name, vs.size()) + ", " + std::to_string(vs.size()) + "}");
    }
    array("Config", p + "configs", cs);
  }

  /// Every problem the kernel's tables name, each once; problem_of_ maps its key to its index.
  void problems(const ExportKernel& k, const std::string& p, const std::vector<std::size_t>& by_name) {
    problem_of_.clear();
    std::vector<const ProblemKey*> list;
    auto add = [&](const std::vector<ExportEntry>& es) {
      for (const ExportEntry& e : es)
        if (problem_of_.emplace(e.problem.key(), list.size()).second) list.push_back(&e.problem);
    };
    for (const ExportWorkload& w : k.workloads) {
      for (const ExportBoard& b : w.boards) {
        add(b.cells);
        add(b.same_cc);
        add(b.borrowed);
      }
      for (const ExportCcGroup& g : w.cc_groups) add(g.entries);
    }
    if (list.empty()) return;
    std::vector<std::string> sizes, logs, items;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const ProblemKey& pk = *list[i];
      for (const std::string& d : k.dims) sizes.push_back(int_literal(pk.at(d)));
      // As lookup.cpp's log_distance and closeness compute them (dims sorted by name, as ProblemKey keeps them).
      for (std::size_t j : by_name)
        logs.push_back(hex_double(std::log2(std::max<double>(1.0, static_cast<double>(pk.at(k.dims[j]))))));
      const double e = pk.elements();
      const std::string off = std::to_string(i * k.dims.size());
      items.push_back("{" + p + "sizes + " + off + ", " + p + "log2 + " + off + ", " + hex_double(e) + ", " +
                      hex_double(std::log2(std::max(1.0, e))) + ", " + literal(pk.data) + ", " + literal(pk.key()) +
                      "}");
    }
    if (!k.dims.empty()) {
      line("inline constexpr std::int64_t " + p + "sizes[] = {" + join(sizes, [](const std::string& s) { return s; }) +
           "};");
      line("inline constexpr double " + p + "log2[] = {" + join(logs, [](const std::string& s) { return s; }) + "};");
    }
    array("Problem", p + "problems", items);
  }

  std::string entries(const std::vector<ExportEntry>& es, const std::string& name, const std::string& kp,
                      const std::vector<std::string>& dims) {
    if (es.empty()) return "nullptr";
    std::vector<std::string> items;
    items.reserve(es.size());
    for (std::size_t i = 0; i < es.size(); ++i) {
      const ExportEntry& e = es[i];
      std::string fills = "nullptr";
      if (!e.fills.empty()) {
        fills = name + "_f" + std::to_string(i);
        std::vector<std::string> fs;
        for (const auto& [from, config] : e.fills)
          fs.push_back("{" + int_literal(from) + ", &" + kp + "configs[" + std::to_string(config) + "]}");
        array("Fill", fills, fs);
      }
      const auto dim = std::find(dims.begin(), dims.end(), e.fill_dim);
      const std::string fill_dim = std::to_string(dim == dims.end() ? 0 : dim - dims.begin());
      items.push_back("{&" + kp + "problems[" + std::to_string(problem_of_.at(e.problem.key())) + "], &" + kp +
                      "configs[" + std::to_string(e.config) + "], " + fill_dim + ", " + fills + ", " +
                      std::to_string(e.fills.size()) + "}");
    }
    array("Entry", name, items);
    return name;
  }

  void workload(const ExportWorkload& w, const std::string& q, const std::string& kp,
                const std::vector<std::string>& dims) {
    std::vector<std::string> boards, ccs, archs;
    for (std::size_t bi = 0; bi < w.boards.size(); ++bi) {
      const ExportBoard& b = w.boards[bi];
      const std::string bp = q + "b" + std::to_string(bi) + "_";
      const std::string cells = entries(b.cells, bp + "cells", kp, dims);
      const std::string same_cc = entries(b.same_cc, bp + "same_cc", kp, dims);
      const std::string borrowed = entries(b.borrowed, bp + "borrowed", kp, dims);
      boards.push_back("{" + literal(b.key.name) + ", " + std::to_string(b.key.cc) + ", " + cells + ", " +
                       std::to_string(b.cells.size()) + ", " + same_cc + ", " + std::to_string(b.same_cc.size()) +
                       ", " + (b.same_arch ? "&" + kp + "configs[" + std::to_string(*b.same_arch) + "]" : "nullptr") +
                       ", " + borrowed + ", " + std::to_string(b.borrowed.size()) + ", " + literal(b.borrowed_from) +
                       "}");
    }
    for (std::size_t gi = 0; gi < w.cc_groups.size(); ++gi) {
      const ExportCcGroup& g = w.cc_groups[gi];
      const std::string es = entries(g.entries, q + "cc" + std::to_string(gi), kp, dims);
      ccs.push_back("{" + std::to_string(g.cc) + ", " + es + ", " + std::to_string(g.entries.size()) + "}");
    }
    for (const ExportArchGroup& a : w.arch_groups)
      archs.push_back("{" + std::to_string(a.major) + ", &" + kp + "configs[" + std::to_string(a.config) + "]}");
    if (!boards.empty()) array("Board", q + "boards", boards);
    if (!ccs.empty()) array("CcGroup", q + "cc", ccs);
    if (!archs.empty()) array("ArchGroup", q + "arch", archs);
  }

  std::string& out_;
  std::vector<std::string> kernels_;
  std::map<std::string, std::size_t> problem_of_;
};

}  // namespace

std::string to_header(const ExportTables& t, const std::string& ns) {
  const std::vector<std::string> parts = namespace_parts(ns);
  std::size_t max_dims = 1;
  for (const ExportKernel& k : t.kernels) max_dims = std::max(max_dims, k.dims.size());
  std::string source = t.database;  // in a comment: one line
  std::replace_if(
      source.begin(), source.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  std::string out;
  out += "// Tuned configurations compiled in: generated by `autotune export --format header` from\n// " + source +
         " (objective " + to_string(t.objective) + "); regenerate rather than edit.\n";
  out += "// " + ns +
         "::select() answers as the autotune lookup library's Lookup::best(kernel, workload, DeviceKey(name, cc),\n"
         "// problem) on that database (same configuration, same match level) without SQLite, NVRTC or the library;\n"
         "// it does not check the caller's device properties (Lookup::best_on does). docs/lookup.md, \"Compiled-in\n"
         "// export\". Self-contained C++17; floating-point options that change std::log2 (-ffast-math) may change\n"
         "// which recorded size is nearest in a tie.\n";
  out += "// Kernels:";
  for (const ExportKernel& k : t.kernels) {
    out += " " + k.name + " (";
    std::string ws;
    for (const ExportWorkload& w : k.workloads) ws += (ws.empty() ? "" : ", ") + w.workload.key();
    out += ws + ")";
  }
  out +=
      "\n#pragma once\n#include <cmath>\n#include <cstddef>\n#include <cstdint>\n#include <initializer_list>\n"
      "#include <string_view>\n\n";
  for (const std::string& part : parts) out += "namespace " + part + " {\n";
  out += kTypes;
  out += "\ninline constexpr int kMaxDims = " + std::to_string(max_dims) + ";\n\n";
  HeaderTables tables(out);
  for (std::size_t ki = 0; ki < t.kernels.size(); ++ki) tables.kernel(t.kernels[ki], ki);
  tables.finish();
  out += kSelector;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += "}  // namespace " + *it + "\n";
  return out;
}

}  // namespace autotune::lookup
