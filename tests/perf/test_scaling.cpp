// Amdahl's-law fit used by compas study: it must recover a known serial fraction from speedups
// generated with it, and ignore points that carry no information.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "compas/perf/scaling.hpp"

namespace {

double amdahl(double f, double n) {
  return 1 / (f + (1 - f) / n);
}

TEST(AmdahlFit, RecoversTheSerialFractionOfExactSpeedups) {
  for (double f : {0.0, 0.01, 0.1, 0.37, 1.0}) {
    std::vector<std::pair<double, double>> pts;
    for (double n : {2.0, 3.0, 4.0, 8.0, 16.0}) pts.push_back({n, amdahl(f, n)});
    const auto fit = compas::perf::fit_amdahl(pts);
    EXPECT_NEAR(fit.serial_fraction, f, 1e-12) << "f " << f;
    EXPECT_EQ(fit.points, 5);
    EXPECT_LT(fit.rms_error, 1e-9);
  }
}

TEST(AmdahlFit, NoisySpeedupsGiveANearbyFraction) {
  std::vector<std::pair<double, double>> pts;
  const double f = 0.05;
  int k = 0;
  for (double n : {2.0, 4.0, 6.0, 8.0, 12.0, 16.0})
    pts.push_back({n, amdahl(f, n) * (1 + ((k++ % 2) ? 0.02 : -0.02))});
  const auto fit = compas::perf::fit_amdahl(pts);
  EXPECT_NEAR(fit.serial_fraction, f, 0.01);
  EXPECT_GT(fit.rms_error, 0);
}

TEST(AmdahlFit, PointsWithoutInformationAreIgnored) {
  EXPECT_EQ(compas::perf::fit_amdahl({}).points, 0);
  EXPECT_EQ(compas::perf::fit_amdahl({{1.0, 1.0}, {4.0, 0.0}, {0.5, 2.0}}).points, 0);
  // Superlinear speedups clamp the fraction at 0 rather than going negative.
  EXPECT_EQ(compas::perf::fit_amdahl({{2.0, 2.5}, {4.0, 5.0}}).serial_fraction, 0.0);
}

}  // namespace
