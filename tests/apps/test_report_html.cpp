// report.html from the study's Markdown (apps/compas/study/report_html.cpp): each block kind becomes
// its HTML element, text is escaped, images are inline data: URIs, and base64 matches RFC 4648.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "../../apps/compas/study/report_html.hpp"

namespace compas::app {
namespace {

std::string render(const std::string& md, const std::map<std::string, std::string>& files = {}) {
  return markdown_to_html(md, "t", [&](const std::string& target) -> std::optional<std::string> {
    const auto f = files.find(target);
    if (f == files.end()) return std::nullopt;
    return f->second;
  });
}

bool has(const std::string& html, const std::string& part) {
  return html.find(part) != std::string::npos;
}

TEST(ReportHtml, Base64IsRfc4648WithPadding) {
  // RFC 4648, section 10.
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foob"), "Zm9vYg==");
  EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64(std::string("\xff\x00\xfe", 3)), "/wD+");
}

TEST(ReportHtml, HeadingsParagraphsAndListsBecomeTheirElements) {
  const std::string html = render("# Title\n\nfirst line\nsecond line\n\n- one\n- two\n\n## Sub\n");
  EXPECT_TRUE(has(html, "<h1>Title</h1>")) << html;
  EXPECT_TRUE(has(html, "<p>first line\nsecond line</p>")) << html;
  EXPECT_TRUE(has(html, "<ul>\n<li>one</li>\n<li>two</li>\n</ul>")) << html;
  EXPECT_TRUE(has(html, "<h2>Sub</h2>")) << html;
  EXPECT_TRUE(has(html, "<!DOCTYPE html>")) << html;
  EXPECT_TRUE(has(html, "</html>")) << html;
}

TEST(ReportHtml, TablesHaveAHeadRowAndCellsWithInlineMarks) {
  const std::string html =
      render("| P x T | spread |\n|---|---|\n| 1 x 2 | **29%** |\n| 2 x 1 | `3%` |\n");
  EXPECT_TRUE(has(html, "<tr><th>P x T</th><th>spread</th></tr>")) << html;
  EXPECT_TRUE(has(html, "<tr><td>1 x 2</td><td><strong>29%</strong></td></tr>")) << html;
  EXPECT_TRUE(has(html, "<td><code>3%</code></td>")) << html;
  EXPECT_FALSE(has(html, "---")) << html;  // the rule row is no row
}

TEST(ReportHtml, TextAndCodeAreEscapedAndCodeBlocksKeepTheirLines) {
  const std::string html = render("a < b & c\n\n````\n<script>x</script>\n```\n````\nafter\n");
  EXPECT_TRUE(has(html, "a &lt; b &amp; c")) << html;
  EXPECT_TRUE(has(html, "<pre><code>&lt;script&gt;x&lt;/script&gt;\n```\n</code></pre>")) << html;
  EXPECT_FALSE(has(html, "<script>")) << html;
  EXPECT_TRUE(has(html, "<p>after</p>")) << html;
}

TEST(ReportHtml, ImagesAreInlineAndAMissingOneIsNamed) {
  const std::string html = render("![bandwidth](plots/membw.png)\n\n![gone](plots/gone.png)\n",
                                  {{"plots/membw.png", "foo"}});
  EXPECT_TRUE(has(html, "<img alt=\"bandwidth\" src=\"data:image/png;base64,Zm9v\">")) << html;
  EXPECT_FALSE(has(html, "src=\"plots/")) << html;  // nothing refers to a file beside it
  EXPECT_TRUE(has(html, "[gone: plots/gone.png could not be read]")) << html;
}

}  // namespace
}  // namespace compas::app
