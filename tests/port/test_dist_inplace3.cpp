// DistArray<T, 3> held by one process: the exchange copies every edge into the halo it images in
// place, split over the OpenMP team (funneled) or the Runtime's team (the (t) form) when the halos
// are long (DistArray::kTeamCopyBytes). Each case checks every halo cell (faces, edges, corners)
// against its wrapped image, or the mark beyond a non-periodic boundary, for long and short halos,
// both layouts, from the OpenMP team's master and in both TeamSync forms. At P > 1 the arrays live
// on a group of one process (the others hold nothing), which copies the same way.
#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist3_check.hpp"

namespace {

using namespace dist3;

struct Case {
  compas::Range3 domain;
  compas::DistOptions3 options;
};

// Long halos (past the team threshold) and short ones, periodic in every mix, both layouts.
std::vector<Case> cases() {
  std::vector<Case> out;
  const compas::Range3 big{{0, 40}, {-3, 41}, {2, 46}}, small{{0, 6}, {0, 5}, {-2, 5}};
  for (const compas::Layout layout : {compas::Layout::padded, compas::Layout::contiguous}) {
    out.push_back({big, {.halo = {1, 1, 1}, .periodic = {true, true, true}, .layout = layout}});
    out.push_back({big, {.halo = {2, 1, 3}, .periodic = {true, false, true}, .layout = layout}});
    out.push_back({small, {.halo = {1, 2, 1}, .periodic = {true, true, true}, .layout = layout}});
    out.push_back({small, {.halo = {0, 1, 2}, .periodic = {false, true, true}, .layout = layout}});
  }
  return out;
}

std::string text(const Case& c) {
  const auto& o = c.options;
  return "halo " + std::to_string(o.halo[0]) + std::to_string(o.halo[1]) +
         std::to_string(o.halo[2]) + ", periodic " + std::to_string(o.periodic[0]) +
         std::to_string(o.periodic[1]) + std::to_string(o.periodic[2]) + ", " +
         std::to_string(c.domain.size()) + " cells";
}

// On the whole job at P = 1, else on a group of process 0 alone.
struct OneProcess {
  compas::Group group;
  OneProcess() : group(compas::split(rt(), me() == 0 ? 0 : compas::undefined)) {}
  Array make(const Case& c) {
    if (P() == 1) return Array(rt(), c.domain, c.options);
    return Array(group, c.domain, c.options);
  }
};

void expect_halos(const Array& u, const Case& c, int step, const char* how) {
  std::string first;
  EXPECT_EQ(wrong_halos(u, c.options.periodic, step, &first), 0)
      << how << ", " << text(c) << ": " << first;
}

TEST(DistInPlace3, FunneledOnTheOpenMPTeam) {
  OneProcess one;
  for (const Case& c : cases()) {
    Array u = one.make(c);
    for (int step = 1; step <= 3; ++step) {
      fill(u, step);
      if (u.member()) u.exchange_halos();
      expect_halos(u, c, step, "funneled");
    }
  }
}

TEST(DistInPlace3, FunneledUnderOmpMaster) {
  OneProcess one;
  for (const Case& c : cases()) {
    Array u = one.make(c);
    fill(u, 4);
    if (u.member()) {
#pragma omp parallel
      {
#pragma omp barrier
#pragma omp master
        u.exchange_halos();
#pragma omp barrier
      }
    }
    expect_halos(u, c, 4, "under omp master");
  }
}

TEST(DistInPlace3, TeamFormsSplitTheCopies) {
  OneProcess one;
  for (const Case& c : cases()) {
    Array u = one.make(c);
    fill(u, 5);
    if (u.member()) rt().run([&](compas::ThreadCtx& t) { u.exchange_halos(t); });
    expect_halos(u, c, 5, "team, barriers");
    fill(u, 6);
    if (u.member())
      rt().run([&](compas::ThreadCtx& t) {
        t.barrier();
        u.exchange_halos(t, compas::TeamSync::none);
        t.barrier();
      });
    expect_halos(u, c, 6, "team, none");
  }
}

TEST(DistInPlace3, AfterABegunExchangeAndWhileOneIsPending) {
  if (P() != 1) GTEST_SKIP() << "one process only (the checks count over the job)";
  const Case c = cases()[0];
  Array u(rt(), c.domain, c.options);
  fill(u, 7);
  auto x = u.begin_exchange();
  EXPECT_THROW(u.exchange_halos(), std::logic_error);
  x.wait();
  expect_halos(u, c, 7, "begun");
  fill(u, 8);
  u.exchange_halos();
  expect_halos(u, c, 8, "after a begun exchange");
  // In place, then through the window again (its signals count only the window's exchanges),
  // and the reverse: accumulate_halos() after in-place exchanges.
  for (int step = 9; step <= 11; ++step) {
    fill(u, step);
    auto y = u.begin_exchange();
    y.wait();
    expect_halos(u, c, step, "begun after an in-place exchange");
    fill(u, step);
    u.exchange_halos();
    expect_halos(u, c, step, "in place between begun exchanges");
  }
  Array a(rt(), c.domain, c.options);
  fill(a, 12);
  a.exchange_halos();
  a.accumulate_halos();  // every owned cell on a face gains its halo images' values
  std::string first;
  EXPECT_GT(wrong_owned(a, 12, &first), 0) << "accumulate after an in-place exchange";
}

}  // namespace
