// Amdahl's-law fit used by compas study: it must recover a known serial fraction from speedups
// generated with it, ignore points that carry no information, and give no fraction at all from
// fewer than 3 points (a study once printed "serial fraction 0.000" fitted to 2).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "compas/analysis/scaling.hpp"

namespace {

double amdahl_speedup(double f, double n) {
  return 1 / (f + (1 - f) / n);
}

TEST(AmdahlFit, RecoversTheSerialFractionOfExactSpeedups) {
  for (double f : {0.0, 0.01, 0.1, 0.37, 1.0}) {
    std::vector<std::pair<double, double>> pts;
    for (double n : {2.0, 3.0, 4.0, 8.0, 16.0}) pts.push_back({n, amdahl_speedup(f, n)});
    const auto fit = compas::analysis::fit_amdahl(pts);
    ASSERT_TRUE(fit.ok()) << fit.reason;
    EXPECT_NEAR(fit.serial_fraction, f, 1e-12) << "f " << f;
    EXPECT_EQ(fit.points, 5);
    EXPECT_LT(fit.rms_error, 1e-9);
    EXPECT_FALSE(fit.clamped);
  }
}

TEST(AmdahlFit, NoisySpeedupsGiveANearbyFractionAndTheirRelativeError) {
  std::vector<std::pair<double, double>> pts;
  const double f = 0.05;
  int k = 0;
  for (double n : {2.0, 4.0, 6.0, 8.0, 12.0, 16.0})
    pts.push_back({n, amdahl_speedup(f, n) * (1 + ((k++ % 2) ? 0.02 : -0.02))});
  const auto fit = compas::analysis::fit_amdahl(pts);
  ASSERT_TRUE(fit.ok()) << fit.reason;
  EXPECT_NEAR(fit.serial_fraction, f, 0.01);
  // Relative residuals of +-2% noise: the rms is near 0.02 whatever the size of the speedups.
  EXPECT_GT(fit.rms_error, 0.01);
  EXPECT_LT(fit.rms_error, 0.03);
}

TEST(AmdahlFit, PointsWithoutInformationAreIgnored) {
  const auto none = compas::analysis::fit_amdahl({});
  EXPECT_EQ(none.points, 0);
  EXPECT_FALSE(none.ok());
  EXPECT_TRUE(std::isnan(none.rms_error));
  const auto useless = compas::analysis::fit_amdahl(
      {{1.0, 1.0}, {4.0, 0.0}, {0.5, 2.0}, {NAN, 2.0}, {8.0, INFINITY}});
  EXPECT_EQ(useless.points, 0);
  EXPECT_FALSE(useless.ok());
}

TEST(AmdahlFit, SuperlinearSpeedupsClampTheFractionAtZeroAndSaySo) {
  const auto fit = compas::analysis::fit_amdahl({{2.0, 2.5}, {4.0, 5.0}, {8.0, 10.0}});
  ASSERT_TRUE(fit.ok()) << fit.reason;
  EXPECT_EQ(fit.serial_fraction, 0.0);
  EXPECT_TRUE(fit.clamped);
  EXPECT_GT(fit.rms_error, 0.1);  // the clamped law misses every point by 20%
}

TEST(AmdahlFit, TwoPointsGiveNoFractionButTheirError) {
  // The study's case: 2 points, and a fraction that looked like a finding.
  const auto fit = compas::analysis::fit_amdahl({{2.0, 1.9}, {4.0, 3.0}});
  EXPECT_FALSE(fit.ok());
  EXPECT_TRUE(std::isnan(fit.serial_fraction));
  EXPECT_EQ(fit.reason, "2 points: at least 3 are needed");
  EXPECT_EQ(fit.points, 2);
  EXPECT_TRUE(std::isfinite(fit.rms_error));
  EXPECT_EQ(compas::analysis::fit_amdahl({{2.0, 1.9}}).reason, "1 point: at least 3 are needed");
  // Points without information do not count towards the 3.
  EXPECT_FALSE(compas::analysis::fit_amdahl({{1.0, 1.0}, {2.0, 1.9}, {4.0, 3.0}}).ok());
  EXPECT_TRUE(compas::analysis::fit_amdahl({{2.0, 1.9}, {4.0, 3.0}, {8.0, 4.2}}).ok());
}

TEST(GustafsonFit, RecoversTheSerialFractionOfScaledSpeedups) {
  // S(N) = N - 0.1 (N - 1): 10% of the time on N workers is serial.
  std::vector<std::pair<double, double>> pts;
  for (double n : {2.0, 4.0, 8.0, 16.0}) pts.push_back({n, n - 0.1 * (n - 1)});
  const auto fit = compas::analysis::fit_gustafson(pts);
  ASSERT_TRUE(fit.ok()) << fit.reason;
  EXPECT_NEAR(fit.serial_fraction, 0.1, 1e-12);
  EXPECT_NEAR(fit.rms_error, 0.0, 1e-12);
  EXPECT_EQ(fit.points, 4);
  // Amdahl's law read on the same scaled speedups would see almost no serial part.
  EXPECT_LT(compas::analysis::fit_amdahl(pts).serial_fraction, 0.02);
}

TEST(GustafsonFit, PerfectWeakScalingHasNoSerialFractionAndTwoPointsNoFit) {
  const auto ideal = compas::analysis::fit_gustafson({{2.0, 2.0}, {4.0, 4.0}, {8.0, 8.0}});
  ASSERT_TRUE(ideal.ok());
  EXPECT_EQ(ideal.serial_fraction, 0.0);
  EXPECT_FALSE(ideal.clamped);
  const auto two = compas::analysis::fit_gustafson({{2.0, 1.8}, {4.0, 3.1}});
  EXPECT_FALSE(two.ok());
  EXPECT_EQ(two.reason, "2 points: at least 3 are needed");
  EXPECT_TRUE(std::isnan(two.serial_fraction));
}

}  // namespace
