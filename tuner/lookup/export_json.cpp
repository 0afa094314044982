// Compiled-in export (export.hpp): the tables as JSON ("autotune-tuned-tables") and back.
#include <map>
#include <nlohmann/json.hpp>

#include "tuner/core/error.hpp"
#include "tuner/lookup/export.hpp"

namespace autotune::lookup {

// ---- JSON -----------------------------------------------------------------------------------------------

namespace {

using ojson = nlohmann::ordered_json;

constexpr const char* kFormat = "autotune-tuned-tables";
/// 2: entries may carry "fills" (the fill rule of level nearest_size); version 1 files (none) still read.
constexpr int kVersion = 2;

ojson entries_json(const std::vector<ExportEntry>& es) {
  ojson a = ojson::array();
  for (const ExportEntry& e : es) {
    ojson o = {{"problem", e.problem.key()}, {"config", e.config}};
    if (!e.fills.empty()) {
      o["fill_dim"] = e.fill_dim;
      o["fills"] = ojson::array();
      for (const auto& [from, config] : e.fills) o["fills"].push_back({{"from", from}, {"config", config}});
    }
    a.push_back(std::move(o));
  }
  return a;
}

ojson value_map_json(const std::map<Value, std::string>& m) {
  ojson o = ojson::object();
  for (const auto& [v, s] : m) o[std::to_string(v)] = s;
  return o;
}

/// Reading: each accessor names the field (a JSON pointer) that is missing or of the wrong type.
class Reader {
 public:
  static const ojson& at(const ojson& j, const std::string& key, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) throw UsageError("tables JSON: missing " + where + "/" + key);
    return j.at(key);
  }
  static std::string str(const ojson& j, const std::string& key, const std::string& where) {
    const ojson& v = at(j, key, where);
    if (!v.is_string()) throw UsageError("tables JSON: " + where + "/" + key + " is not a string");
    return v.get<std::string>();
  }
  static std::int64_t integer(const ojson& j, const std::string& key, const std::string& where) {
    const ojson& v = at(j, key, where);
    if (!v.is_number_integer()) throw UsageError("tables JSON: " + where + "/" + key + " is not an integer");
    return v.get<std::int64_t>();
  }
  static const ojson& array(const ojson& j, const std::string& key, const std::string& where) {
    const ojson& v = at(j, key, where);
    if (!v.is_array()) throw UsageError("tables JSON: " + where + "/" + key + " is not an array");
    return v;
  }
  /// A configuration index, checked against the kernel's configurations.
  static std::size_t config(const ojson& j, const std::string& key, const std::string& where, std::size_t n) {
    const std::int64_t i = integer(j, key, where);
    if (i < 0 || static_cast<std::size_t>(i) >= n)
      throw UsageError("tables JSON: " + where + "/" + key + " is not a configuration index (0.." + std::to_string(n) +
                       ")");
    return static_cast<std::size_t>(i);
  }
  static std::vector<ExportEntry> entries(const ojson& j, const std::string& key, const std::string& where,
                                          std::size_t nconfigs) {
    std::vector<ExportEntry> out;
    const ojson& a = array(j, key, where);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string w = where + "/" + key + "/" + std::to_string(i);
      ExportEntry e{ProblemKey::parse(str(a[i], "problem", w)), config(a[i], "config", w, nconfigs), "", {}};
      if (a[i].contains("fills")) {
        e.fill_dim = str(a[i], "fill_dim", w);
        if (!e.problem.dims.count(e.fill_dim))
          throw UsageError("tables JSON: " + w + "/fill_dim '" + e.fill_dim + "' is not a dimension of the problem");
        const ojson& fs = array(a[i], "fills", w);
        for (std::size_t f = 0; f < fs.size(); ++f) {
          const std::string fw = w + "/fills/" + std::to_string(f);
          const std::int64_t from = integer(fs[f], "from", fw);
          if (from < 1 || (!e.fills.empty() && from >= e.fills.back().first))
            throw UsageError("tables JSON: " + fw + "/from is not a size below the one before it");
          e.fills.push_back({from, config(fs[f], "config", fw, nconfigs)});
        }
      }
      out.push_back(std::move(e));
    }
    return out;
  }
  static std::map<Value, std::string> value_map(const ojson& j, const std::string& key, const std::string& where) {
    std::map<Value, std::string> out;
    const ojson& o = at(j, key, where);
    if (!o.is_object()) throw UsageError("tables JSON: " + where + "/" + key + " is not an object");
    for (const auto& [k, v] : o.items()) {
      if (!v.is_string()) throw UsageError("tables JSON: " + where + "/" + key + "/" + k + " is not a string");
      try {
        std::size_t used = 0;
        const long long n = std::stoll(k, &used);
        if (used != k.size()) throw std::invalid_argument(k);
        out[n] = v.get<std::string>();
      } catch (const std::logic_error&) {
        throw UsageError("tables JSON: " + where + "/" + key + " has the key '" + k + "', not a number");
      }
    }
    return out;
  }
};

Param::Kind kind_from(const std::string& s, const std::string& where) {
  for (Param::Kind k : {Param::Kind::integer, Param::Kind::floating, Param::Kind::string, Param::Kind::boolean})
    if (s == param_kind_name(k)) return k;
  throw UsageError("tables JSON: " + where + " is '" + s + "', not integer, floating, string or boolean");
}

}  // namespace

std::string to_json(const ExportTables& t) {
  ojson j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["database"] = t.database;
  j["objective"] = to_string(t.objective);
  j["kernels"] = ojson::array();
  for (const ExportKernel& k : t.kernels) {
    ojson jk;
    jk["name"] = k.name;
    jk["dims"] = k.dims;
    jk["params"] = ojson::array();
    for (const ExportParam& p : k.params)
      jk["params"].push_back({{"name", p.name},
                              {"kind", param_kind_name(p.kind)},
                              {"labels", value_map_json(p.labels)},
                              {"texts", value_map_json(p.texts)}});
    jk["configs"] = ojson::array();
    for (const Config& c : k.configs) jk["configs"].push_back(ojson::parse(c.to_json()));
    jk["spec_default"] = k.spec_default;
    jk["workloads"] = ojson::array();
    for (const ExportWorkload& w : k.workloads) {
      ojson jw;
      jw["workload"] = w.workload.key();
      jw["boards"] = ojson::array();
      for (const ExportBoard& b : w.boards)
        jw["boards"].push_back({{"name", b.key.name},
                                {"device", b.name},
                                {"cc", b.key.cc},
                                {"cells", entries_json(b.cells)},
                                {"same_cc", entries_json(b.same_cc)},
                                {"same_arch", b.same_arch ? ojson(*b.same_arch) : ojson(nullptr)},
                                {"borrowed", entries_json(b.borrowed)},
                                {"borrowed_from", b.borrowed_from}});
      jw["cc_groups"] = ojson::array();
      for (const ExportCcGroup& g : w.cc_groups)
        jw["cc_groups"].push_back({{"cc", g.cc}, {"entries", entries_json(g.entries)}});
      jw["arch_groups"] = ojson::array();
      for (const ExportArchGroup& a : w.arch_groups)
        jw["arch_groups"].push_back({{"major", a.major}, {"config", a.config}});
      jk["workloads"].push_back(std::move(jw));
    }
    j["kernels"].push_back(std::move(jk));
  }
  return j.dump(2) + "\n";
}

ExportTables tables_from_json(const std::string& text) {
  ojson j;
  try {
    j = ojson::parse(text);
  } catch (const ojson::parse_error& e) {
    throw UsageError(std::string("tables JSON: not JSON: ") + e.what());
  }
  using R = Reader;
  if (R::str(j, "format", "") != kFormat) throw UsageError(std::string("tables JSON: /format is not ") + kFormat);
  const std::int64_t version = R::integer(j, "version", "");
  if (version != 1 && version != kVersion)
    throw UsageError("tables JSON: /version " + std::to_string(version) + " is not 1 or " + std::to_string(kVersion));
  ExportTables t;
  t.database = R::str(j, "database", "");
  try {
    t.objective = objective_from_string(R::str(j, "objective", ""));
  } catch (const Error& e) {
    throw UsageError(std::string("tables JSON: /objective: ") + e.what());
  }
  const ojson& ks = R::array(j, "kernels", "");
  for (std::size_t ki = 0; ki < ks.size(); ++ki) {
    const ojson& jk = ks[ki];
    const std::string kw = "/kernels/" + std::to_string(ki);
    ExportKernel k;
    k.name = R::str(jk, "name", kw);
    for (const ojson& d : R::array(jk, "dims", kw)) {
      if (!d.is_string()) throw UsageError("tables JSON: " + kw + "/dims holds a non-string");
      k.dims.push_back(d.get<std::string>());
    }
    const ojson& ps = R::array(jk, "params", kw);
    for (std::size_t pi = 0; pi < ps.size(); ++pi) {
      const std::string pw = kw + "/params/" + std::to_string(pi);
      k.params.push_back({R::str(ps[pi], "name", pw), kind_from(R::str(ps[pi], "kind", pw), pw + "/kind"),
                          R::value_map(ps[pi], "labels", pw), R::value_map(ps[pi], "texts", pw)});
    }
    const ojson& cs = R::array(jk, "configs", kw);
    for (std::size_t ci = 0; ci < cs.size(); ++ci) {
      try {
        k.configs.push_back(Config::from_json(cs[ci].dump()));
      } catch (const Error& e) {
        throw UsageError("tables JSON: " + kw + "/configs/" + std::to_string(ci) + ": " + e.what());
      }
    }
    const std::size_t n = k.configs.size();
    k.spec_default = R::config(jk, "spec_default", kw, n);
    const ojson& ws = R::array(jk, "workloads", kw);
    for (std::size_t wi = 0; wi < ws.size(); ++wi) {
      const ojson& jw = ws[wi];
      const std::string ww = kw + "/workloads/" + std::to_string(wi);
      ExportWorkload w;
      w.workload = Workload::parse(R::str(jw, "workload", ww));
      const ojson& bs = R::array(jw, "boards", ww);
      for (std::size_t bi = 0; bi < bs.size(); ++bi) {
        const std::string bw = ww + "/boards/" + std::to_string(bi);
        ExportBoard b;
        b.key.name = R::str(bs[bi], "name", bw);
        b.key.cc = static_cast<int>(R::integer(bs[bi], "cc", bw));
        b.name = R::str(bs[bi], "device", bw);
        b.cells = R::entries(bs[bi], "cells", bw, n);
        b.same_cc = R::entries(bs[bi], "same_cc", bw, n);
        if (!R::at(bs[bi], "same_arch", bw).is_null()) b.same_arch = R::config(bs[bi], "same_arch", bw, n);
        if (bs[bi].contains("borrowed")) {  // tables written before level borrowed have none
          b.borrowed = R::entries(bs[bi], "borrowed", bw, n);
          b.borrowed_from = R::str(bs[bi], "borrowed_from", bw);
        }
        w.boards.push_back(std::move(b));
      }
      const ojson& gs = R::array(jw, "cc_groups", ww);
      for (std::size_t gi = 0; gi < gs.size(); ++gi) {
        const std::string gw = ww + "/cc_groups/" + std::to_string(gi);
        w.cc_groups.push_back({static_cast<int>(R::integer(gs[gi], "cc", gw)), R::entries(gs[gi], "entries", gw, n)});
      }
      const ojson& as = R::array(jw, "arch_groups", ww);
      for (std::size_t ai = 0; ai < as.size(); ++ai) {
        const std::string aw = ww + "/arch_groups/" + std::to_string(ai);
        w.arch_groups.push_back(
            {static_cast<int>(R::integer(as[ai], "major", aw)), R::config(as[ai], "config", aw, n)});
      }
      k.workloads.push_back(std::move(w));
    }
    t.kernels.push_back(std::move(k));
  }
  return t;
}

}  // namespace autotune::lookup
