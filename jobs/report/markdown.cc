#include "jobs/report/markdown.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "jobs/report/html.h"

namespace reel::jobs::report {
namespace {

struct ParserDeleter {
  void operator()(cmark_parser* p) const { cmark_parser_free(p); }
};
struct NodeDeleter {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};
struct IterDeleter {
  void operator()(cmark_iter* i) const { cmark_iter_free(i); }
};
struct CharDeleter {
  void operator()(char* s) const { std::free(s); }
};
using UniqueParser = std::unique_ptr<cmark_parser, ParserDeleter>;
using UniqueNode = std::unique_ptr<cmark_node, NodeDeleter>;
using UniqueIter = std::unique_ptr<cmark_iter, IterDeleter>;
using UniqueChars = std::unique_ptr<char, CharDeleter>;

// Safe mode is cmark's default (CMARK_OPT_UNSAFE is never set): raw HTML is replaced by a
// comment and unsafe link targets by "".
constexpr int kOptions = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8 | CMARK_OPT_HARDBREAKS;

struct Document {
  UniqueParser parser;
  UniqueNode root;
};

Document Parse(std::string_view markdown) {
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });
  Document d;
  d.parser.reset(cmark_parser_new(kOptions));
  for (const char* name : {"table", "strikethrough"}) {
    if (cmark_syntax_extension* e = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(d.parser.get(), e);
    }
  }
  cmark_parser_feed(d.parser.get(), markdown.data(), markdown.size());
  d.root.reset(cmark_parser_finish(d.parser.get()));
  return d;
}

bool InsideLink(cmark_node* node) {
  for (cmark_node* p = cmark_node_parent(node); p != nullptr; p = cmark_node_parent(p)) {
    const cmark_node_type t = cmark_node_get_type(p);
    if (t == CMARK_NODE_LINK || t == CMARK_NODE_IMAGE) return true;
  }
  return false;
}

}  // namespace

std::string MarkdownHtml(std::string_view markdown, const TextMarkupHook& markup) {
  Document d = Parse(markdown);
  if (!d.root) return Html(markdown);
  cmark_consolidate_text_nodes(d.root.get());
  // Collected first: the tree is changed after the walk, not during it.
  std::vector<cmark_node*> texts, images;
  {
    UniqueIter it(cmark_iter_new(d.root.get()));
    for (cmark_event_type ev; (ev = cmark_iter_next(it.get())) != CMARK_EVENT_DONE;) {
      if (ev != CMARK_EVENT_ENTER) continue;
      cmark_node* node = cmark_iter_get_node(it.get());
      const cmark_node_type type = cmark_node_get_type(node);
      if (type == CMARK_NODE_IMAGE) images.push_back(node);
      if (type == CMARK_NODE_TEXT && markup && !InsideLink(node)) texts.push_back(node);
    }
  }
  // A marked-up range becomes a link node to "#" whose title is a marker, and the link as
  // rendered is then replaced by the range's HTML. (Raw HTML nodes would be dropped by the safe
  // renderer, and a table cell takes no custom nodes.) The marker is a word the answer does not
  // contain, so the answer cannot forge one.
  std::string marker = "reel-markup-";
  while (markdown.find(marker) != std::string_view::npos) marker += "x";
  std::vector<std::string> replacements;
  for (cmark_node* node : texts) {
    const char* literal = cmark_node_get_literal(node);
    const std::string text = literal ? literal : "";
    std::vector<TextMarkup> ranges = markup(text);
    if (ranges.empty()) continue;
    size_t at = 0;
    auto add_text = [&](size_t begin, size_t end) {
      if (end <= begin) return;
      cmark_node* t = cmark_node_new(CMARK_NODE_TEXT);
      cmark_node_set_literal(t, text.substr(begin, end - begin).c_str());
      cmark_node_insert_before(node, t);
    };
    for (TextMarkup& r : ranges) {
      if (r.begin < at || r.end > text.size() || r.end <= r.begin) continue;
      add_text(at, r.begin);
      cmark_node* link = cmark_node_new(CMARK_NODE_LINK);
      cmark_node_set_url(link, "#");
      cmark_node_set_title(link, (marker + std::to_string(replacements.size())).c_str());
      cmark_node* t = cmark_node_new(CMARK_NODE_TEXT);
      cmark_node_set_literal(t, text.substr(r.begin, r.end - r.begin).c_str());
      cmark_node_append_child(link, t);
      cmark_node_insert_before(node, link);
      replacements.push_back(std::move(r.html));
      at = r.end;
    }
    add_text(at, text.size());
    cmark_node_free(node);  // unlinks it
  }
  // An image would be fetched by the browser (a remote URL is a request to someone's server):
  // it becomes a link with its alt text.
  for (cmark_node* image : images) {
    cmark_node* link = cmark_node_new(CMARK_NODE_LINK);
    cmark_node_set_url(link, cmark_node_get_url(image));
    cmark_node_set_title(link, cmark_node_get_title(image));
    while (cmark_node* child = cmark_node_first_child(image)) cmark_node_append_child(link, child);
    if (cmark_node_first_child(link) == nullptr) {
      cmark_node* alt = cmark_node_new(CMARK_NODE_TEXT);
      cmark_node_set_literal(alt, "image");
      cmark_node_append_child(link, alt);
    }
    cmark_node_replace(image, link);
    cmark_node_free(image);
  }
  UniqueChars rendered(cmark_render_html(d.root.get(), kOptions,
                                         cmark_parser_get_syntax_extensions(d.parser.get())));
  if (!rendered) return Html(markdown);
  std::string html = rendered.get();
  if (replacements.empty()) return html;
  std::string out;
  out.reserve(html.size() + replacements.size() * 64);
  size_t at = 0;
  for (size_t k = 0; k < replacements.size(); ++k) {
    const std::string open = "<a href=\"#\" title=\"" + marker + std::to_string(k) + "\">";
    const size_t begin = html.find(open, at);
    const size_t close = begin == std::string::npos ? begin : html.find("</a>", begin);
    if (close == std::string::npos) continue;  // not rendered (cannot happen): left as a link
    out.append(html, at, begin - at);
    out += replacements[k];
    at = close + 4;
  }
  out.append(html, at);
  return out;
}

std::string MarkdownPlainText(std::string_view markdown) {
  Document d = Parse(markdown);
  std::string text;
  if (!d.root) {
    text = std::string(markdown);
  } else {
    // The literal text of text and code nodes, a space at line breaks and where a block (a
    // paragraph, a list item, a table cell) ends.
    UniqueIter it(cmark_iter_new(d.root.get()));
    for (cmark_event_type ev; (ev = cmark_iter_next(it.get())) != CMARK_EVENT_DONE;) {
      cmark_node* node = cmark_iter_get_node(it.get());
      const cmark_node_type type = cmark_node_get_type(node);
      if (ev == CMARK_EVENT_ENTER) {
        if (type == CMARK_NODE_TEXT || type == CMARK_NODE_CODE || type == CMARK_NODE_CODE_BLOCK) {
          const char* literal = cmark_node_get_literal(node);
          if (literal) text += literal;
        }
        if (type == CMARK_NODE_SOFTBREAK || type == CMARK_NODE_LINEBREAK) text += ' ';
      } else if (ev == CMARK_EVENT_EXIT) {
        const std::string_view name = cmark_node_get_type_string(node);
        if (type == CMARK_NODE_PARAGRAPH || type == CMARK_NODE_HEADING || type == CMARK_NODE_ITEM ||
            name == "table_cell" || name == "table_row") {
          text += ' ';
        }
      }
    }
  }
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace reel::jobs::report
