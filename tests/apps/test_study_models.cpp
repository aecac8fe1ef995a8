// The study's scaling conclusions for one kernel size (apps/compas/study/study_models.cpp): no Amdahl
// fraction and no model below 3 points, each saying why; on points of known form the model and
// its prediction; the Extra-P export of the points.
#include <gtest/gtest.h>

#include <cmath>

#include "../../apps/compas/study/study_models.hpp"
#include "compas/analysis/extrap.hpp"

namespace {

using compas::app::ScalingPoint;

std::vector<ScalingPoint> amdahl_points(std::vector<std::pair<int, int>> shapes, double f) {
  std::vector<ScalingPoint> out;
  for (auto [p, t] : shapes) {
    const double n = static_cast<double>(p) * t;
    out.push_back({p, t, false, 10.0 * (f + (1 - f) / n), {}});
  }
  return out;
}

std::vector<std::pair<double, double>> speedups_of(const std::vector<ScalingPoint>& points) {
  std::vector<std::pair<double, double>> out;
  for (const auto& p : points)
    if (p.procs * p.threads > 1)
      out.push_back({static_cast<double>(p.procs) * p.threads, points[0].seconds / p.seconds});
  return out;
}

TEST(StudyModels, TwoPointsGiveNeitherFractionNorModelAndSayWhy) {
  const auto points = amdahl_points({{1, 1}, {1, 2}, {2, 1}}, 0.1);
  const auto s = compas::app::scaling_summary(speedups_of(points), points, false, "sweep");
  EXPECT_TRUE(s.json["amdahl_serial_fraction"].is_null()) << s.json.dump();
  EXPECT_NE(s.markdown.find("Amdahl fit: none (2 points: at least 3 are needed)"),
            std::string::npos)
      << s.markdown;
  EXPECT_NE(
      s.markdown.find("Performance model of the time per sweep against p = P x T: none (too few "
                      "points"),
      std::string::npos)
      << s.markdown;
  EXPECT_EQ(s.markdown.find("nan"), std::string::npos) << s.markdown;
}

TEST(StudyModels, AmdahlPointsGiveTheirFractionAndAModelThatPredicts) {
  const auto points = amdahl_points({{1, 1}, {2, 1}, {4, 1}, {8, 1}, {16, 1}, {32, 1}}, 0.1);
  const auto s = compas::app::scaling_summary(speedups_of(points), points, false, "sweep");
  EXPECT_NEAR(s.json["amdahl_serial_fraction"].get<double>(), 0.1, 1e-6) << s.json.dump();
  ASSERT_TRUE(s.json["model"].contains("formula")) << s.json.dump();
  const auto& next = s.json["model"]["prediction"];
  EXPECT_EQ(next["p"].get<double>(), 64);
  const double truth = 10.0 * (0.1 + 0.9 / 64);
  EXPECT_LE(std::abs(next["seconds_per_unit"].get<double>() - truth),
            next["uncertainty"].get<double>() + 1e-9 * truth)
      << s.json.dump();
  // Oversubscribed points take no part.
  auto over = points;
  over.push_back({64, 1, true, 100.0, {}});
  EXPECT_EQ(compas::app::scaling_summary(speedups_of(points), over, false, "sweep")
                .json["model"]["points"],
            6);
}

TEST(StudyModels, ExtraPExportHasADataLinePerPointWithItsRepetitions) {
  const std::vector<ScalingPoint> points = {
      {1, 1, false, 2.0, {}}, {1, 2, false, 1.1, {1.0, 1.1, 1.3}}, {2, 1, true, 1.2, {}}};
  const auto data = compas::analysis::parse_extrap_text(
      compas::app::extrap_export("gemm n=256", points, "multiply"));
  // The oversubscribed 2 x 1 point measures the oversubscription, not the scaling: left out, as
  // compas's own model leaves it out.
  ASSERT_EQ(data.points.size(), 2u);
  EXPECT_EQ(data.points[1], (std::vector<double>{1, 2}));
  ASSERT_EQ(data.series.size(), 1u);
  EXPECT_EQ(data.series[0].metric, "time_per_multiply");
  EXPECT_EQ(data.series[0].values[0], (std::vector<double>{2.0}));
  EXPECT_EQ(data.series[0].values[1], (std::vector<double>{1.0, 1.1, 1.3}));
  EXPECT_EQ(compas::app::extrap_export("x", {}, "sweep"), "");
}

}  // namespace
