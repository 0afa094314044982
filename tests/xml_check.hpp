// A minimal XML well-formedness checker for the SVG/XHTML the report module writes (tests only).
// Accepts: an optional <?xml ...?> declaration, <!DOCTYPE ...>, comments, elements with quoted attributes,
// text, the five predefined entities and numeric character references. Rejects: unbalanced or crossed
// tags, unquoted or duplicate attributes, a raw '<' or a bad '&' in text or attribute values, more than one
// root element. Builds a flat element list for queries.
#pragma once
#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace autotune_test {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  int parent = -1;
  std::string text;  // direct text content (entities not decoded)
};

struct XmlDoc {
  bool ok = false;
  std::string error;
  std::vector<XmlElement> elements;  // document order

  std::size_t count(const std::string& name) const {
    std::size_t n = 0;
    for (const auto& e : elements) n += e.name == name ? 1 : 0;
    return n;
  }
  /// First element with attribute id == value, or nullptr.
  const XmlElement* by_id(const std::string& id) const {
    for (const auto& e : elements) {
      auto it = e.attrs.find("id");
      if (it != e.attrs.end() && it->second == id) return &e;
    }
    return nullptr;
  }
  /// Elements named `name` whose attribute `attr` equals `value`.
  std::size_t count_with(const std::string& name, const std::string& attr, const std::string& value) const {
    std::size_t n = 0;
    for (const auto& e : elements) {
      if (e.name != name) continue;
      auto it = e.attrs.find(attr);
      n += it != e.attrs.end() && it->second == value ? 1 : 0;
    }
    return n;
  }
  /// True if element i lies (at any depth) inside an element named `name`.
  bool inside(std::size_t i, const std::string& name) const {
    for (int p = elements[i].parent; p >= 0; p = elements[static_cast<std::size_t>(p)].parent)
      if (elements[static_cast<std::size_t>(p)].name == name) return true;
    return false;
  }
};

namespace xml_detail {

inline bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' || c == '.';
}

/// Checks entity references in text; false on a bad one.
inline bool check_entities(const std::string& s, std::string* err) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') {
      *err = "raw '<' in text or attribute";
      return false;
    }
    if (s[i] != '&') continue;
    std::size_t semi = s.find(';', i);
    if (semi == std::string::npos || semi - i > 10) {
      *err = "bad entity near '" + s.substr(i, 12) + "'";
      return false;
    }
    std::string ent = s.substr(i + 1, semi - i - 1);
    bool ok = ent == "amp" || ent == "lt" || ent == "gt" || ent == "quot" || ent == "apos";
    if (!ok && ent.size() > 1 && ent[0] == '#') {
      ok = true;
      std::size_t k = 1;
      bool hex = ent[1] == 'x';
      if (hex) k = 2;
      if (k >= ent.size()) ok = false;
      for (; k < ent.size() && ok; ++k)
        ok = hex ? std::isxdigit(static_cast<unsigned char>(ent[k])) != 0 : std::isdigit(static_cast<unsigned char>(ent[k])) != 0;
    }
    if (!ok) {
      *err = "unknown entity &" + ent + ";";
      return false;
    }
    i = semi;
  }
  return true;
}

}  // namespace xml_detail

inline XmlDoc parse_xml(const std::string& s) {
  using namespace xml_detail;
  XmlDoc doc;
  std::vector<int> stack;
  std::size_t i = 0;
  int roots = 0;
  auto fail = [&](const std::string& msg) {
    doc.ok = false;
    doc.error = msg + " at offset " + std::to_string(i);
    return doc;
  };
  while (i < s.size()) {
    if (s[i] != '<') {
      std::size_t next = s.find('<', i);
      std::string text = s.substr(i, next == std::string::npos ? std::string::npos : next - i);
      std::string err;
      if (!check_entities(text, &err)) return fail(err);
      bool blank = text.find_first_not_of(" \t\r\n") == std::string::npos;
      if (stack.empty() && !blank) return fail("text outside the root element");
      if (!stack.empty()) doc.elements[static_cast<std::size_t>(stack.back())].text += text;
      if (next == std::string::npos) break;
      i = next;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      std::size_t end = s.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    if (s.compare(i, 2, "<?") == 0) {
      std::size_t end = s.find("?>", i);
      if (end == std::string::npos) return fail("unterminated processing instruction");
      i = end + 2;
      continue;
    }
    if (s.compare(i, 9, "<!DOCTYPE") == 0) {
      if (!doc.elements.empty()) return fail("DOCTYPE after the root element");
      std::size_t end = s.find('>', i);
      if (end == std::string::npos) return fail("unterminated DOCTYPE");
      i = end + 1;
      continue;
    }
    if (s.compare(i, 2, "</") == 0) {
      std::size_t j = i + 2, start = j;
      while (j < s.size() && name_char(s[j])) ++j;
      std::string name = s.substr(start, j - start);
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size() || s[j] != '>') return fail("bad end tag </" + name);
      if (stack.empty() || doc.elements[static_cast<std::size_t>(stack.back())].name != name)
        return fail("end tag </" + name + "> does not match " +
                    (stack.empty() ? std::string("anything") : "<" + doc.elements[static_cast<std::size_t>(stack.back())].name + ">"));
      stack.pop_back();
      i = j + 1;
      continue;
    }
    // Start tag.
    std::size_t j = i + 1, start = j;
    while (j < s.size() && name_char(s[j])) ++j;
    XmlElement el;
    el.name = s.substr(start, j - start);
    if (el.name.empty()) return fail("empty tag name");
    el.parent = stack.empty() ? -1 : stack.back();
    if (stack.empty()) {
      if (++roots > 1) return fail("second root element <" + el.name + ">");
    }
    bool self_close = false;
    for (;;) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size()) return fail("unterminated tag <" + el.name);
      if (s[j] == '>') {
        ++j;
        break;
      }
      if (s.compare(j, 2, "/>") == 0) {
        self_close = true;
        j += 2;
        break;
      }
      std::size_t a = j;
      while (j < s.size() && name_char(s[j])) ++j;
      std::string attr = s.substr(a, j - a);
      if (attr.empty()) return fail("bad attribute in <" + el.name + ">");
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size() || s[j] != '=') return fail("attribute " + attr + " without value in <" + el.name + ">");
      ++j;
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size() || (s[j] != '"' && s[j] != '\'')) return fail("unquoted attribute " + attr);
      char q = s[j++];
      std::size_t end = s.find(q, j);
      if (end == std::string::npos) return fail("unterminated attribute " + attr);
      std::string value = s.substr(j, end - j);
      std::string err;
      if (!check_entities(value, &err)) return fail(err + " in attribute " + attr);
      if (el.attrs.count(attr)) return fail("duplicate attribute " + attr + " in <" + el.name + ">");
      el.attrs[attr] = value;
      j = end + 1;
    }
    doc.elements.push_back(std::move(el));
    if (!self_close) stack.push_back(static_cast<int>(doc.elements.size() - 1));
    i = j;
  }
  if (!stack.empty()) return fail("unclosed <" + doc.elements[static_cast<std::size_t>(stack.back())].name + ">");
  if (roots != 1) return fail("no root element");
  doc.ok = true;
  return doc;
}

}  // namespace autotune_test
