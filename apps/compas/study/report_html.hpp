// report.html: compas study's report.md as one self-contained HTML file. The Markdown the study
// writes (headings, paragraphs, lists, pipe tables, fenced code, **bold**, `code`, image lines)
// becomes HTML with every image inline as a data: URI, so a browser opens it from disk, mailed
// or copied alone, with its figures.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace compas::app {

// The bytes of an image by its link target ("plots/membw.png"), or none when it cannot be read.
using ImageReader = std::function<std::optional<std::string>(const std::string& target)>;

// `markdown` as a whole HTML document titled `title`. An image that cannot be read is shown as
// its alt text with the missing file named.
std::string markdown_to_html(const std::string& markdown, const std::string& title,
                             const ImageReader& read_image);

// RFC 4648 base64 of `bytes`, padded.
std::string base64(const std::string& bytes);

}  // namespace compas::app
