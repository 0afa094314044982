// The report of bench/versus_libraries.cu: the markdown table and the CSV file of its result rows (host code only).
// Included once, by versus_libraries.cu, after versus_harness.cuh.
#pragma once
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "versus_harness.cuh"

namespace versus {

// ---- report ---------------------------------------------------------------------------------------------------

std::string cell_ms(const Impl& i) { return i.ok ? fixed(i.ms, 4) : "-"; }
std::string cell_gbps(const Impl& i) { return i.ok ? fixed(i.gbps, 1) : "-"; }
std::string cell_ratio(double r) { return r > 0 ? fixed(r, 2) : "-"; }
std::string status_cell(const Impl& i) {
  if (i.ok) return "";
  std::string s = first_line(i.status, 90);
  for (auto& ch : s)
    if (ch == '|') ch = '/';
  return i.name + " " + s;
}

void print_table(const std::vector<Row>& rows) {
  std::printf(
      "| family | case | library | ours ms | library ms | copy ms | ours GB/s | library GB/s | copy GB/s | "
      "ours/library | ours/copy | library/copy |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.family.c_str(), r.label.c_str(),
                r.lib.name.c_str(), cell_ms(r.ours).c_str(), cell_ms(r.lib).c_str(), cell_ms(r.copy).c_str(),
                cell_gbps(r.ours).c_str(), cell_gbps(r.lib).c_str(), cell_gbps(r.copy).c_str(),
                cell_ratio(r.ours.ok && r.lib.ok ? r.lib.ms / r.ours.ms : 0).c_str(),
                cell_ratio(ratio(r.ours, r.copy)).c_str(), cell_ratio(ratio(r.lib, r.copy)).c_str());
  }
  std::printf("\nours: configuration per case (match level of the lookup, where the binary came from)\n\n");
  std::printf("| family | case | match | configuration | binary | measured at | problems |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::string problems;
    for (const Impl* i : {&r.ours, &r.lib, &r.copy}) {
      const std::string s = status_cell(*i);
      if (!s.empty()) problems += (problems.empty() ? "" : "; ") + s;
    }
    if (!r.note.empty()) problems += (problems.empty() ? "note: " : "; note: ") + first_line(r.note, 120);
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.family.c_str(), r.label.c_str(),
                r.match.empty() ? "-" : (r.match + " (" + std::to_string(r.level) + ")").c_str(),
                r.config.empty() ? "-" : r.config.c_str(), r.binary.empty() ? "-" : r.binary.c_str(),
                r.measured.empty() ? "-" : r.measured.c_str(), problems.c_str());
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

bool write_csv(const std::string& path, const std::vector<Row>& rows, const std::string& device) {
  std::ofstream f(path);
  if (!f) return false;
  f << "device,family,case,dtype,op,n,rows,cols,select_pct,selected,bytes_counted,"
       "ours_status,ours_ms,ours_min_ms,ours_gbps,library,library_status,library_ms,library_min_ms,library_gbps,"
       "copy_status,copy_ms,copy_gbps,ours_over_library,ours_over_copy,library_over_copy,"
       "match,match_level,config,binary,measured_at,prepare_ms,compile_ms,note\n";
  for (const Row& r : rows) {
    const double ol = r.ours.ok && r.lib.ok ? r.lib.ms / r.ours.ms : 0;
    f << csv_field(device) << ',' << r.family << ',' << csv_field(r.label) << ',' << r.dtype << ',' << r.op << ','
      << r.n << ',' << r.rows << ',' << r.cols << ',' << r.pct << ',' << r.selected << ',' << fixed(r.bytes, 0) << ','
      << csv_field(first_line(r.ours.status, 400)) << ',' << fixed(r.ours.ms, 6) << ',' << fixed(r.ours.min_ms, 6)
      << ',' << fixed(r.ours.gbps, 2) << ',' << csv_field(r.lib.name) << ',' << csv_field(first_line(r.lib.status, 400))
      << ',' << fixed(r.lib.ms, 6) << ',' << fixed(r.lib.min_ms, 6) << ',' << fixed(r.lib.gbps, 2) << ','
      << csv_field(first_line(r.copy.status, 400)) << ',' << fixed(r.copy.ms, 6) << ',' << fixed(r.copy.gbps, 2)
      << ',' << fixed(ol, 4) << ',' << fixed(ratio(r.ours, r.copy), 4) << ',' << fixed(ratio(r.lib, r.copy), 4)
      << ',' << r.match << ',' << r.level << ',' << csv_field(r.config) << ',' << r.binary << ','
      << csv_field(r.measured) << ',' << fixed(r.prepare_ms, 3) << ',' << fixed(r.compile_ms, 3) << ','
      << csv_field(first_line(r.note, 400)) << '\n';
  }
  return static_cast<bool>(f);
}

}  // namespace versus
