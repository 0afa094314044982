#include "tuner/core/identity.hpp"

#include <cctype>
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "tuner/core/hash.hpp"

namespace autotune {

namespace {

/// The text with line splices joined and comments replaced by one space; string and character literals (raw
/// strings included) are kept as they are.
std::string strip_comments(const std::string& in) {
  std::string s;
  s.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {  // line splices first, as translation phase 2 does
    if (in[i] == '\\' && i + 1 < in.size() && in[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (in[i] == '\\' && i + 2 < in.size() && in[i + 1] == '\r' && in[i + 2] == '\n') {
      i += 2;
      continue;
    }
    s += in[i] == '\r' ? '\n' : in[i];
  }
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      out += ' ';
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const std::size_t end = s.find("*/", i + 2);
      // A comment spanning lines still ends the directive it started on: keep its newlines.
      for (std::size_t k = i; k < (end == std::string::npos ? s.size() : end); ++k)
        if (s[k] == '\n') out += '\n';
      out += ' ';
      i = end == std::string::npos ? s.size() : end + 2;
    } else if (c == 'R' && i + 1 < s.size() && s[i + 1] == '"' &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) {
      const std::size_t open = s.find('(', i + 2);
      if (open == std::string::npos) {
        out += s.substr(i);
        break;
      }
      const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      const std::size_t end = s.find(close, open);
      const std::size_t stop = end == std::string::npos ? s.size() : end + close.size();
      out += s.substr(i, stop - i);
      i = stop;
    } else if (c == '"' || c == '\'') {
      std::size_t k = i + 1;
      while (k < s.size() && s[k] != c && s[k] != '\n') k += s[k] == '\\' ? 2 : 1;
      k = std::min(k + 1, s.size());
      out += s.substr(i, k - i);
      i = k;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

/// Multi-character punctuators, longest first (maximal munch): "a >> b" and "a > > b" stay different.
constexpr std::string_view kPunctuators[] = {"%:%:", ">>=", "<<=", "->*", "...", "<=>", "##", "::", "->", "++", "--",
                                             "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=",
                                             "%=", "&=", "|=", "^=", ".*"};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// The tokens of one line of code (no comments left).
std::vector<std::string> tokenize(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '"' || c == '\'' || ((c == 'R' || c == 'L' || c == 'u' || c == 'U') && i + 1 < s.size() &&
                                          (s[i + 1] == '"' || s[i + 1] == '\'' || (s[i + 1] == '8' && i + 2 < s.size() && s[i + 2] == '"')))) {
      // A literal (with its prefix): up to the closing quote; raw strings were kept whole by strip_comments.
      std::size_t k = i;
      while (k < s.size() && s[k] != '"' && s[k] != '\'') ++k;
      const char q = k < s.size() ? s[k] : '"';
      if (k > i && s[k - 1] == 'R') {
        const std::size_t open = s.find('(', k);
        const std::string close = open == std::string_view::npos ? "\"" : ")" + std::string(s.substr(k + 1, open - k - 1)) + "\"";
        const std::size_t end = s.find(close, open == std::string_view::npos ? k : open);
        k = end == std::string_view::npos ? s.size() : end + close.size();
      } else {
        ++k;
        while (k < s.size() && s[k] != q) k += s[k] == '\\' ? 2 : 1;
        k = std::min(k + 1, s.size());
      }
      out.emplace_back(s.substr(i, k - i));
      i = k;
    } else if (ident_char(c) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      // Identifiers and pp-numbers (1.5e-3f, 0x1p+4).
      const bool number = std::isdigit(static_cast<unsigned char>(c)) || c == '.';
      std::size_t k = i + 1;
      while (k < s.size()) {
        const bool exponent_sign = number && (s[k] == '+' || s[k] == '-') &&
                                   (s[k - 1] == 'e' || s[k - 1] == 'E' || s[k - 1] == 'p' || s[k - 1] == 'P');
        if (!ident_char(s[k]) && !(number && s[k] == '.') && !exponent_sign) break;
        ++k;
      }
      out.emplace_back(s.substr(i, k - i));
      i = k;
    } else {
      std::size_t len = 1;
      for (std::string_view p : kPunctuators)
        if (s.substr(i, p.size()) == p) {
          len = p.size();
          break;
        }
      out.emplace_back(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

struct Line {
  bool directive = false;
  std::string name;                 // directive name ("if", "include", ...)
  std::vector<std::string> tokens;  // the line's tokens (a directive: those after its name)
};

std::vector<Line> lines_of(const std::string& text) {
  std::vector<Line> out;
  const std::string s = strip_comments(text);
  std::size_t at = 0;
  while (at <= s.size()) {
    std::size_t end = s.find('\n', at);
    if (end == std::string::npos) end = s.size();
    std::string_view line(s.data() + at, end - at);
    Line l;
    std::size_t k = 0;
    while (k < line.size() && std::isspace(static_cast<unsigned char>(line[k]))) ++k;
    if (k < line.size() && line[k] == '#') {
      l.directive = true;
      std::vector<std::string> t = tokenize(line.substr(k + 1));
      if (!t.empty()) {
        l.name = t.front();
        l.tokens.assign(t.begin() + 1, t.end());
      }
    } else {
      l.tokens = tokenize(line);
    }
    if (l.directive || !l.tokens.empty()) out.push_back(std::move(l));
    at = end + 1;
  }
  return out;
}

/// A header's lines without its include guard (#ifndef G / #define G first, the matching #endif last) and
/// without #pragma once.
std::vector<Line> unguarded(std::vector<Line> lines) {
  std::vector<Line> out;
  for (Line& l : lines)
    if (!(l.directive && l.name == "pragma" && l.tokens.size() == 1 && l.tokens[0] == "once")) out.push_back(std::move(l));
  if (out.size() >= 3 && out[0].directive && out[0].name == "ifndef" && out[0].tokens.size() == 1 && out[1].directive &&
      out[1].name == "define" && out[1].tokens.size() == 1 && out[1].tokens[0] == out[0].tokens[0] &&
      out.back().directive && out.back().name == "endif") {
    int depth = 0;  // the #endif must close the guard's #ifndef, not a later conditional
    bool closes_last = true;
    for (std::size_t i = 0; i + 1 < out.size(); ++i) {
      const Line& l = out[i];
      if (!l.directive) continue;
      if (l.name == "if" || l.name == "ifdef" || l.name == "ifndef") ++depth;
      else if (l.name == "endif" && --depth == 0) closes_last = false;
    }
    if (closes_last) {
      out.pop_back();
      out.erase(out.begin(), out.begin() + 2);
    }
  }
  return out;
}

/// Whether a conditional directive tests only whether one macro of `defined` is defined: its truth when it does.
std::optional<bool> known_condition(const Line& l, const std::set<std::string>& defined) {
  const std::vector<std::string>& t = l.tokens;
  if (l.name == "ifdef" || l.name == "ifndef") {
    if (t.size() == 1 && defined.count(t[0])) return l.name == "ifdef";
    return std::nullopt;
  }
  // #if / #elif: "defined X", "defined(X)", "!defined X", "!defined(X)"
  std::size_t i = 0;
  bool negate = false;
  if (i < t.size() && t[i] == "!") {
    negate = true;
    ++i;
  }
  if (i >= t.size() || t[i] != "defined") return std::nullopt;
  ++i;
  std::string name;
  if (t.size() == i + 3 && t[i] == "(" && t[i + 2] == ")") name = t[i + 1];
  else if (t.size() == i + 1) name = t[i];
  if (name.empty() || !defined.count(name)) return std::nullopt;
  return !negate;
}

class Normalizer {
 public:
  Normalizer(const std::map<std::string, std::string>& headers, const std::set<std::string>& defined)
      : headers_(headers), defined_(defined) {}

  void run(const std::vector<Line>& lines) {
    for (const Line& l : lines) line(l);
  }
  std::string take() { return std::move(out_); }

 private:
  /// One conditional group: `known` ones are decided here (their directives vanish), the others are kept.
  struct Frame {
    bool known = false;
    bool parent_active = true;
    bool taken = false;   // known: a branch was taken
    bool active = true;   // known: the current branch is taken
  };

  bool active() const {
    if (frames_.empty()) return true;
    const Frame& f = frames_.back();
    return f.parent_active && (!f.known || f.active);
  }

  void emit_line(const std::string& head, const std::vector<std::string>& tokens) {
    out_ += head;
    for (const std::string& t : tokens) {
      if (!out_.empty() && out_.back() != '\n') out_ += ' ';
      out_ += t;
    }
    out_ += '\n';
  }
  void emit_code(const std::vector<std::string>& tokens) {
    for (const std::string& t : tokens) {
      if (!out_.empty() && out_.back() != '\n' && out_.back() != ' ') out_ += ' ';
      out_ += t;
    }
  }
  void emit_directive(const Line& l) {
    if (!out_.empty() && out_.back() != '\n') out_ += '\n';
    emit_line("# " + l.name, l.tokens);
  }

  void line(const Line& l) {
    if (!l.directive) {
      if (active()) emit_code(l.tokens);
      return;
    }
    const std::string& n = l.name;
    if (n == "if" || n == "ifdef" || n == "ifndef") {
      Frame f;
      f.parent_active = active();
      if (const auto c = known_condition(l, defined_)) {
        f.known = true;
        f.active = f.taken = *c;
      } else if (f.parent_active) {
        emit_directive(l);
      }
      frames_.push_back(f);
    } else if (n == "elif" || n == "else") {
      if (frames_.empty()) return;
      Frame& f = frames_.back();
      if (!f.known) {
        if (f.parent_active) emit_directive(l);
        return;
      }
      if (f.taken) {
        f.active = false;
      } else if (n == "else") {
        f.active = f.taken = true;
      } else if (const auto c = known_condition(l, defined_)) {
        f.active = f.taken = *c;
      } else {
        // An #elif that cannot be decided after branches that were not taken: from here on a kept conditional.
        f.known = false;
        if (f.parent_active) emit_line("# if", l.tokens);
      }
    } else if (n == "endif") {
      if (frames_.empty()) return;
      const Frame f = frames_.back();
      frames_.pop_back();
      if (!f.known && f.parent_active) emit_directive(l);
    } else if (!active()) {
      return;
    } else if (n == "include" && l.tokens.size() == 1 && l.tokens[0].size() > 2 && l.tokens[0].front() == '"') {
      const std::string name = l.tokens[0].substr(1, l.tokens[0].size() - 2);
      auto it = headers_.find(name);
      if (it == headers_.end()) {
        emit_directive(l);
      } else if (inlined_.insert(name).second) {
        const std::vector<Frame> outer = std::move(frames_);
        frames_.clear();
        run(unguarded(lines_of(it->second)));
        frames_ = outer;
      }
    } else if (n == "line" || n.empty() || (n == "pragma" && l.tokens.size() == 1 && l.tokens[0] == "once")) {
      // line markers, null directives and #pragma once do not change the code
    } else {
      emit_directive(l);
    }
  }

  const std::map<std::string, std::string>& headers_;
  const std::set<std::string>& defined_;
  std::vector<Frame> frames_;
  std::set<std::string> inlined_;
  std::string out_;
};

}  // namespace

std::string normalized_code(const std::string& source, const std::map<std::string, std::string>& headers,
                            const std::set<std::string>& defined) {
  Normalizer n(headers, defined);
  n.run(lines_of(source));
  return n.take();
}

std::string TuningSpec::code_identity() const { return autotune::code_identity(*this); }

std::string code_identity(const TuningSpec& spec) {
  if (spec.is_stub()) return kImportedSourceHash;
  std::set<std::string> defined = {"AUTOTUNE_STRICT"};
  for (const Param& p : spec.params) defined.insert(p.name);
  for (const auto& [name, value] : spec.defines) defined.insert(name);
  std::string text = "autotune-code-v1";
  text += '\0';
  text += normalized_code(spec.source_text, spec.headers, defined);
  text += '\0';
  for (const std::string& k : spec.kernels) text += "kernel=" + k + '\0';
  for (const auto& [name, value] : spec.defines) text += "define=" + name + "=" + value + '\0';
  for (const std::string& o : spec.compile_options) text += "option=" + o + '\0';
  return "c1:" + content_hash(text);
}

}  // namespace autotune
