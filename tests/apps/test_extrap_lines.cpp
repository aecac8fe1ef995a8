// The study's Extra-P JSON Lines: a line per point with every repetition, the size a parameter
// where the study varies it and it is a number, oversubscribed points left out, and a note when
// a parameter has fewer values than Extra-P needs for a model. Read back with a JSON parser, as
// Extra-P reads it (a JSON object per line: params, callpath, metric, value).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../../apps/compas/study/extrap_lines.hpp"

namespace compas::app {
namespace {

using json = nlohmann::json;

std::vector<json> parse_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << line;
    out.push_back(j);
  }
  return out;
}

TEST(ExtrapLines, EveryRepetitionOverProcessesThreadsAndTheSize) {
  const std::vector<ExtrapPoint> points = {{"n=640", 1, 1, false, {1.0, 1.1, 0.9}, "sweep"},
                                           {"n=640", 2, 1, false, {0.5, 0.55}, "sweep"},
                                           {"n=640", 2, 2, true, {0.4}, "sweep"},
                                           {"n=1024", 1, 1, false, {2.5}, "sweep"}};
  const ExtrapLines l = extrap_lines("laplace", points);
  const auto lines = parse_lines(l.text);
  ASSERT_EQ(lines.size(), 3u) << "the oversubscribed point is left out\n" << l.text;
  EXPECT_EQ(lines[0]["params"], (json{{"processes", 1}, {"threads", 1}, {"n", 640.0}}));
  EXPECT_EQ(lines[0]["callpath"], "laplace");
  EXPECT_EQ(lines[0]["metric"], "time_per_sweep");
  EXPECT_EQ(lines[0]["value"], (json{1.0, 1.1, 0.9}));
  EXPECT_EQ(lines[2]["params"]["n"], 1024.0);
  EXPECT_EQ(l.values.at("processes"), 2);
  EXPECT_EQ(l.values.at("n"), 2);
  EXPECT_NE(l.note.find("at least 5 values of each parameter"), std::string::npos) << l.note;
  EXPECT_NE(l.note.find("n 2"), std::string::npos) << l.note;
}

TEST(ExtrapLines, ANamedOrFixedSizeIsNoParameter) {
  const auto classes = parse_lines(extrap_lines("cg", {{"class=W", 1, 1, false, {1.0}, "sweep"},
                                                       {"class=A", 1, 2, false, {2.0}, "sweep"}})
                                       .text);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_FALSE(classes[0]["params"].contains("class"));
  // Two classes are two problems: never one point of two sizes' times (class A's 0.41 s and class
  // T's 0.02 s were merged as the repetitions of one measurement).
  EXPECT_EQ(classes[0]["callpath"], "cg/class=W");
  EXPECT_EQ(classes[1]["callpath"], "cg/class=A");
  const auto one = parse_lines(extrap_lines("sort", {{"keys=4M", 1, 1, false, {1.0}, "sweep"},
                                                     {"keys=4M", 2, 1, false, {0.6}, "sweep"}})
                                   .text);
  EXPECT_FALSE(one[0]["params"].contains("keys")) << "one size: not a parameter";
  EXPECT_EQ(size_parameter("keys=4M"), (std::pair<std::string, double>{"keys", 4194304.0}));
  EXPECT_EQ(size_parameter("class=W").first, "");
}

TEST(ExtrapLines, FivePointsPerParameterNeedNoNote) {
  std::vector<ExtrapPoint> points;
  for (int p = 1; p <= 5; ++p)
    for (int t = 1; t <= 5; ++t) points.push_back({"n=640", p, t, false, {1.0 / (p * t)}, "sweep"});
  EXPECT_EQ(extrap_lines("laplace", points).note, "");
}

}  // namespace
}  // namespace compas::app
