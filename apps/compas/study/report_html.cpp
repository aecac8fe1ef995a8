// report.html from report.md (report_html.hpp). Block by block: a line starting "#" is a
// heading, "- " a list item, "|" a table row (the second row of a table, |---|, is its rule), a
// fence of backticks opens a code block closed by a fence as long, "![alt](target)" alone on a
// line an image; other lines gather into paragraphs until a blank line.
#include "report_html.hpp"

#include <sstream>
#include <string_view>
#include <vector>

namespace compas::app {

namespace {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  return out;
}

// `code` and **bold** within a line; everything else escaped.
std::string inline_html(std::string_view s) {
  std::string out;
  bool bold = false;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '`') {
      const std::size_t end = s.find('`', i + 1);
      if (end != std::string_view::npos) {
        out += "<code>" + escape(s.substr(i + 1, end - i - 1)) + "</code>";
        i = end + 1;
        continue;
      }
    }
    if (s.substr(i, 2) == "**") {
      out += bold ? "</strong>" : "<strong>";
      bold = !bold;
      i += 2;
      continue;
    }
    out += escape(s.substr(i, 1));
    ++i;
  }
  if (bold) out += "</strong>";
  return out;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// The cells of a pipe-table row "| a | b |".
std::vector<std::string> cells_of(std::string_view row) {
  std::vector<std::string> cells;
  if (starts_with(row, "|")) row.remove_prefix(1);
  if (!row.empty() && row.back() == '|') row.remove_suffix(1);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= row.size(); ++i)
    if (i == row.size() || row[i] == '|') {
      std::string_view cell = row.substr(start, i - start);
      while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
      while (!cell.empty() && cell.back() == ' ') cell.remove_suffix(1);
      cells.emplace_back(cell);
      start = i + 1;
    }
  return cells;
}

bool is_rule(std::string_view row) {
  return starts_with(row, "|---") || starts_with(row, "| ---");
}

// "![alt](target)" alone on a line.
bool image_line(std::string_view line, std::string& alt, std::string& target) {
  if (!starts_with(line, "![") || line.back() != ')') return false;
  const std::size_t mid = line.find("](");
  if (mid == std::string_view::npos) return false;
  alt = std::string(line.substr(2, mid - 2));
  target = std::string(line.substr(mid + 2, line.size() - mid - 3));
  return true;
}

std::size_t fence_length(std::string_view line) {
  std::size_t n = 0;
  while (n < line.size() && line[n] == '`') ++n;
  return n >= 3 ? n : 0;
}

class Renderer {
 public:
  explicit Renderer(const ImageReader& read) : read_(read) {}

  std::string render(const std::string& md) {
    std::vector<std::string> lines;
    std::istringstream in(md);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (std::size_t i = 0; i < lines.size(); ++i) line(lines[i]);
    close_blocks();
    return out_.str();
  }

 private:
  void line(const std::string& l) {
    if (fence_ > 0) {
      if (fence_length(l) == fence_ && l.size() == fence_) {
        out_ << "</code></pre>\n";
        fence_ = 0;
      } else {
        out_ << escape(l) << "\n";
      }
      return;
    }
    std::string alt, target;
    if (const std::size_t f = fence_length(l)) {
      close_blocks();
      fence_ = f;
      out_ << "<pre><code>";
    } else if (l.empty()) {
      close_blocks();
    } else if (starts_with(l, "#")) {
      close_blocks();
      std::size_t level = 0;
      while (level < l.size() && l[level] == '#') ++level;
      out_ << "<h" << level << ">" << inline_html(std::string_view(l).substr(level + 1)) << "</h"
           << level << ">\n";
    } else if (starts_with(l, "|")) {
      table_row(l);
    } else if (starts_with(l, "- ")) {
      if (block_ != Block::list) {
        close_blocks();
        out_ << "<ul>\n";
        block_ = Block::list;
      }
      out_ << "<li>" << inline_html(std::string_view(l).substr(2)) << "</li>\n";
    } else if (image_line(l, alt, target)) {
      close_blocks();
      image(alt, target);
    } else {
      if (block_ != Block::paragraph) {
        close_blocks();
        out_ << "<p>";
        block_ = Block::paragraph;
      } else {
        out_ << "\n";
      }
      out_ << inline_html(l);
    }
  }

  void table_row(const std::string& l) {
    if (block_ != Block::table) {
      close_blocks();
      out_ << "<table>\n";
      block_ = Block::table;
      head_ = true;
    }
    if (is_rule(l)) {
      head_ = false;
      return;
    }
    const char* tag = head_ ? "th" : "td";
    out_ << "<tr>";
    for (const auto& cell : cells_of(l))
      out_ << "<" << tag << ">" << inline_html(cell) << "</" << tag << ">";
    out_ << "</tr>\n";
  }

  void image(const std::string& alt, const std::string& target) {
    const auto bytes = read_(target);
    if (!bytes) {
      out_ << "<p class=\"missing\">[" << escape(alt) << ": " << escape(target)
           << " could not be read]</p>\n";
      return;
    }
    out_ << "<figure><img alt=\"" << escape(alt) << "\" src=\"data:image/png;base64,"
         << base64(*bytes) << "\"><figcaption>" << escape(alt) << "</figcaption></figure>\n";
  }

  void close_blocks() {
    switch (block_) {
      case Block::paragraph:
        out_ << "</p>\n";
        break;
      case Block::list:
        out_ << "</ul>\n";
        break;
      case Block::table:
        out_ << "</table>\n";
        break;
      case Block::none:
        break;
    }
    block_ = Block::none;
    if (fence_ > 0) {  // an unclosed fence ends with the document
      out_ << "</code></pre>\n";
      fence_ = 0;
    }
  }

  enum class Block { none, paragraph, list, table };
  const ImageReader& read_;
  std::ostringstream out_;
  Block block_ = Block::none;
  bool head_ = false;
  std::size_t fence_ = 0;
};

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:80em;margin:1em auto;padding:0 1em;line-height:1.4}"
    "table{border-collapse:collapse;margin:0.5em 0}th,td{border:1px solid #bbb;padding:2px "
    "6px;text-align:right}th{background:#eee}td:first-child,th:first-child{text-align:left}"
    "pre{background:#f4f4f4;padding:0.5em;overflow-x:auto}img{max-width:100%}"
    "figure{margin:0.5em 0}figcaption{font-size:small;color:#555}.missing{color:#a00}"
    "strong{color:#a00}";

}  // namespace

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 |
                       static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (const std::size_t rest = bytes.size() - i) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string markdown_to_html(const std::string& markdown, const std::string& title,
                             const ImageReader& read_image) {
  Renderer r(read_image);
  const std::string body = r.render(markdown);
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
         escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n" + body +
         "</body>\n</html>\n";
}

}  // namespace compas::app
