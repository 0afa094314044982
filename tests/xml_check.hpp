// XML well-formedness check of the SVG/XHTML the report module writes (tests only), by libxml2 (Debian's
// libxml2-dev): a conforming parser, so unbalanced or crossed tags, unquoted or duplicate attributes, a raw '<'
// or a bad '&', an undefined entity or a second root element make the document fail with libxml2's message.
// No network, no external DTD. The elements come back as a flat list in document order for queries; namespace
// declarations are listed among the attributes ("xmlns", "xmlns:xlink"), as they are written.
#pragma once
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <map>
#include <string>
#include <vector>

namespace autotune_test {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  int parent = -1;
  std::string text;  // direct text content (entities decoded)
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

inline std::string text_of(const xmlChar* s) { return s != nullptr ? reinterpret_cast<const char*>(s) : ""; }

/// "prefix:name" or "name".
inline std::string qualified(const xmlNs* ns, const xmlChar* name) {
  return ns != nullptr && ns->prefix != nullptr ? text_of(ns->prefix) + ":" + text_of(name) : text_of(name);
}

inline void collect(const xmlNode* node, int parent, XmlDoc& doc) {
  for (; node != nullptr; node = node->next) {
    if (node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE) {
      if (parent >= 0) doc.elements[static_cast<std::size_t>(parent)].text += text_of(node->content);
      continue;
    }
    if (node->type != XML_ELEMENT_NODE) continue;
    XmlElement e;
    e.name = qualified(node->ns, node->name);
    e.parent = parent;
    for (const xmlNs* ns = node->nsDef; ns != nullptr; ns = ns->next)
      e.attrs[ns->prefix != nullptr ? "xmlns:" + text_of(ns->prefix) : "xmlns"] = text_of(ns->href);
    for (const xmlAttr* a = node->properties; a != nullptr; a = a->next) {
      xmlChar* v = xmlNodeListGetString(node->doc, a->children, 1);
      e.attrs[qualified(a->ns, a->name)] = text_of(v);
      xmlFree(v);
    }
    doc.elements.push_back(std::move(e));
    collect(node->children, static_cast<int>(doc.elements.size() - 1), doc);
  }
}

}  // namespace xml_detail

inline XmlDoc parse_xml(const std::string& s) {
  XmlDoc doc;
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (ctxt == nullptr) {
    doc.error = "libxml2: no parser context";
    return doc;
  }
  xmlDocPtr parsed = xmlCtxtReadMemory(ctxt, s.data(), static_cast<int>(s.size()), "document.xml", nullptr,
                                       XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  const xmlError* err = xmlCtxtGetLastError(ctxt);
  if (parsed == nullptr || (err != nullptr && err->level >= XML_ERR_ERROR)) {
    doc.error = err != nullptr ? "line " + std::to_string(err->line) + ": " + xml_detail::text_of(
                                     reinterpret_cast<const xmlChar*>(err->message))
                               : "not well-formed";
    while (!doc.error.empty() && doc.error.back() == '\n') doc.error.pop_back();
  } else {
    xml_detail::collect(xmlDocGetRootElement(parsed), -1, doc);
    doc.ok = true;
  }
  if (parsed != nullptr) xmlFreeDoc(parsed);
  xmlFreeParserCtxt(ctxt);
  return doc;
}

}  // namespace autotune_test
