// compas::migrate across real processes: every rank of a compas-run job (P = 1..4) runs these
// cases. Items carry their origin and serial number, so an item lost, duplicated, misplaced or
// out of the documented order is seen. And the destinations a particle code gives it:
// DistArray::owner(), the rank whose part holds an index (compas::part_holding, split's inverse).
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/port/dist_array.hpp"
#include "compas/port/migrate.hpp"
#include "compas/runtime/group.hpp"

namespace {

// What migrate threw as a CollectiveError ("" when it did not).
template <class F>
std::string alike_error(F f) {
  try {
    f();
  } catch (const compas::CollectiveError& e) {
    return e.what();
  }
  return "";
}

struct Item {
  std::int32_t origin, serial;
  double payload;
};

// Item `serial` of process `origin` goes to this process (a fixed scramble of both).
int destination_of(const Item& it, int p) {
  return static_cast<int>((static_cast<std::uint32_t>(it.origin) * 2654435761u +
                           static_cast<std::uint32_t>(it.serial) * 40503u) %
                          static_cast<std::uint32_t>(p));
}

std::vector<Item> make_items(int origin, int count) {
  std::vector<Item> v;
  for (int s = 0; s < count; ++s) v.push_back({origin, s, origin * 1000.0 + s * 0.5});
  return v;
}

// After one migration every process holds exactly the items bound for it: its own kept ones in
// their order, then every other process's in rank order, each in its sender's order.
TEST(Migrate, EveryItemEndsWhereItBelongsInTheDocumentedOrder) {
  const int p = rt().processes(), me = rt().process();
  auto count = [](int r) { return r == 1 ? 0 : 50 + 37 * r; };  // rank 1 sends nothing
  std::vector<Item> items = make_items(me, count(me));
  compas::migrate(rt(), items, [p](const Item& it) { return destination_of(it, p); });
  std::vector<Item> want;
  for (const Item& it : make_items(me, count(me)))
    if (destination_of(it, p) == me) want.push_back(it);
  for (int r = 0; r < p; ++r)
    if (r != me)
      for (const Item& it : make_items(r, count(r)))
        if (destination_of(it, p) == me) want.push_back(it);
  ASSERT_EQ(items.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(items[k].origin, want[k].origin) << k;
    EXPECT_EQ(items[k].serial, want[k].serial) << k;
    EXPECT_EQ(items[k].payload, want[k].payload) << k;
  }
}

// From 4096 items on the destinations are found on the OpenMP team: the same result, in the same
// order (20011 items per process, a prime, so the threads' shares differ).
TEST(Migrate, ManyItemsOnTheTeamEndWhereTheyBelongInOrder) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libgomp's fork and join are not instrumented: tsan would report them";
#endif
  const int p = rt().processes(), me = rt().process();
  std::vector<Item> items = make_items(me, 20011);
  compas::migrate(rt(), items, [p](const Item& it) { return destination_of(it, p); });
  std::vector<Item> want;
  for (const Item& it : make_items(me, 20011))
    if (destination_of(it, p) == me) want.push_back(it);
  for (int r = 0; r < p; ++r)
    if (r != me)
      for (const Item& it : make_items(r, 20011))
        if (destination_of(it, p) == me) want.push_back(it);
  ASSERT_EQ(items.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(items[k].origin, want[k].origin) << k;
    ASSERT_EQ(items[k].serial, want[k].serial) << k;
  }
}

// The first item sent outside 0..P-1 is the one named, whichever thread found which; and a
// destination that throws is the same kind of error on every process, naming the item and what
// it threw, with the items left as they were on every process, also where some would have left
// (5 items: in one pass, put back on the refusal; 20011: on the team when it has two threads).
TEST(Migrate, TheFirstBadDestinationOrThrowIsNamedOnEveryProcess) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libgomp's fork and join are not instrumented: tsan would report them";
#endif
  const int p = rt().processes(), me = rt().process(), last = p - 1;
  for (int count : {5, 20011}) {
    const int first = count > 5 ? 9001 : 1, second = count > 5 ? 15013 : 3;
    std::vector<Item> items = make_items(me, count);
    const std::string outside = alike_error([&] {
      compas::migrate(rt(), items, [&](const Item& it) {
        if (me == last && (it.serial == first || it.serial == second)) return -7;
        return it.serial % 3 == 0 ? (me + 1) % p : me;  // some leave (put back on the refusal)
      });
    });
    EXPECT_NE(outside.find("process " + std::to_string(last) + ": item " + std::to_string(first) +
                           " is sent to process -7"),
              std::string::npos)
        << outside;
    const std::string threw = alike_error([&] {
      compas::migrate(rt(), items, [&](const Item& it) {
        if (me == last && (it.serial == second || it.serial == first))
          throw std::runtime_error("no cell at serial " + std::to_string(it.serial));
        return it.serial % 3 == 0 ? (me + 1) % p : me;
      });
    });
    EXPECT_NE(threw.find("process " + std::to_string(last) + ": item " + std::to_string(first) +
                         ": destination threw 'no cell at serial " + std::to_string(first) + "'"),
              std::string::npos)
        << threw;
    ASSERT_EQ(items.size(), static_cast<std::size_t>(count));  // left as they were
    for (int s = 0; s < count; ++s) ASSERT_EQ(items[static_cast<std::size_t>(s)].serial, s);
  }
}

// Moving everything to one process and back again.
TEST(Migrate, AllToOneAndBack) {
  const int p = rt().processes(), me = rt().process();
  std::vector<Item> items = make_items(me, 10);
  compas::migrate(rt(), items, [](const Item&) { return 0; });
  EXPECT_EQ(items.size(), me == 0 ? static_cast<std::size_t>(10 * p) : 0u);
  compas::migrate(rt(), items, [](const Item& it) { return it.origin; });
  ASSERT_EQ(items.size(), 10u);
  for (int s = 0; s < 10; ++s) EXPECT_EQ(items[static_cast<std::size_t>(s)].serial, s);
}

// Within a Group: destinations are group ranks, items move among the members only, and arrive
// by sending group rank. Even and odd processes form two groups that migrate at once.
TEST(Migrate, WithinAGroupRanksAreGroupRanks) {
  const int me = rt().process();
  compas::Group g = compas::split(rt(), me % 2, me);
  const int q = g.processes(), at = g.process();
  std::vector<Item> items = make_items(me, 20 + me);
  compas::migrate(g, items, [q](const Item& it) { return destination_of(it, q); });
  std::vector<Item> want;
  for (const Item& it : make_items(me, 20 + me))
    if (destination_of(it, q) == at) want.push_back(it);
  for (int r = 0; r < q; ++r) {
    const int job = g.job_rank(r);
    if (r != at)
      for (const Item& it : make_items(job, 20 + job))
        if (destination_of(it, q) == at) want.push_back(it);
  }
  ASSERT_EQ(items.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(items[k].origin % 2, me % 2) << k;  // from a member only
    EXPECT_EQ(items[k].origin, want[k].origin) << k;
    EXPECT_EQ(items[k].serial, want[k].serial) << k;
  }
}

TEST(Migrate, ADestinationOutsideTheJobIsNamedOnEveryProcess) {
  const int p = rt().processes(), me = rt().process();
  std::vector<Item> items = make_items(me, 5);
  try {
    compas::migrate(rt(), items,
                    [&](const Item& it) { return me == p - 1 && it.serial == 3 ? p : me; });
    FAIL() << "a destination outside the job was accepted";
  } catch (const compas::CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("compas::migrate: process " + std::to_string(p - 1) +
                                         ": item 3 is sent to process " + std::to_string(p) +
                                         ", outside 0.." + std::to_string(p - 1)),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(items.size(), 5u);  // left as it was
}

// part_holding(r, parts, i) names the part of block_of(r, parts, .) whose range holds i, for every
// index of ranges that parts divide, do not divide, or outnumber.
// (and PartHolding, the same lookup with its block sizes worked out once)
TEST(Owner, PartHoldingIsTheInverseOfSplit) {
  for (compas::index n : {1, 2, 7, 12, 13, 100})
    for (compas::index parts : {1, 2, 3, 4, 5, 16}) {
      const compas::Range r{-3, n - 3};
      for (compas::index q = 0; q < parts; ++q) {
        const compas::Range part = compas::block_of(r, parts, q);
        const compas::PartHolding holding(r, parts);  // its divisions made once
        for (compas::index i = part.lo; i < part.hi; ++i) {
          EXPECT_EQ(compas::part_holding(r, parts, i), q) << n << " over " << parts << ": " << i;
          EXPECT_EQ(holding(i), q) << n << " over " << parts << ": " << i;
        }
      }
    }
}

// On every process, the cells owner() names this process for are exactly its owned part: so
// every process's answer for every cell is right (1-D, 2-D by rows, 2-D over the process grid,
// sizes the process counts do not divide).
TEST(Owner, EveryProcessOwnsExactlyTheCellsOwnerNamesItFor) {
  const int me = rt().process();
  compas::DistArray<int> line(rt(), compas::Range{5, 5 + 3 * rt().processes() + 2});
  for (compas::index i = line.domain().lo; i < line.domain().hi; ++i)
    EXPECT_EQ(line.owner(i) == me, line.owned().contains(i)) << i;
  for (auto d : {compas::Decomposition::rows, compas::Decomposition::grid}) {
    compas::DistArray<int, 2> u(rt(), compas::Range2{{1, 12}, {-2, 11}}, {.decomposition = d});
    for (compas::index i = u.domain().rows.lo; i < u.domain().rows.hi; ++i)
      for (compas::index j = u.domain().cols.lo; j < u.domain().cols.hi; ++j) {
        const int o = u.owner(i, j);
        EXPECT_TRUE(o >= 0 && o < rt().processes()) << i << "," << j << ": " << o;
        EXPECT_EQ(o == me, u.owned().contains(i, j)) << i << "," << j;
      }
  }
}

// A point's owner is the owner of the cell holding it (its coordinates rounded down), negative
// origins included.
TEST(Owner, APointBelongsToTheOwnerOfItsCell) {
  compas::DistArray<int, 2> u(rt(), compas::Range2{{-3, 8}, {-2, 11}},
                              {.decomposition = compas::Decomposition::grid});
  for (compas::index i = u.domain().rows.lo; i < u.domain().rows.hi; ++i)
    for (compas::index j = u.domain().cols.lo; j < u.domain().cols.hi; ++j)
      for (const double d : {0.0, 0.25, 0.999}) {
        const double x = static_cast<double>(i) + d, y = static_cast<double>(j) + d;
        EXPECT_EQ(u.owner(x, y), u.owner(i, j)) << x << "," << y;
        EXPECT_EQ(u.owner(static_cast<float>(x), static_cast<float>(y)), u.owner(i, j));
      }
}

// Particles scattered over a 2-D grid of cells migrate to the owners of their cells: each ends on
// the process whose part holds its cell, and none is lost or duplicated.
TEST(Owner, ParticlesMigrateToTheOwnersOfTheirCells) {
  const int p = rt().processes(), me = rt().process();
  compas::DistArray<double, 2> q(rt(), compas::Range2{{0, 9}, {0, 14}},
                                 {.decomposition = compas::Decomposition::grid});
  std::vector<Item> items = make_items(me, 40 + 7 * me);
  auto cell = [](const Item& it) {
    const auto h = static_cast<std::uint32_t>(it.origin * 7919 + it.serial * 104729);
    return std::pair<compas::index, compas::index>{h % 9, (h / 9) % 14};
  };
  compas::migrate(rt(), items, [&](const Item& it) {
    const auto [i, j] = cell(it);
    return q.owner(i, j);
  });
  long total = 0;
  for (int r = 0; r < p; ++r) total += 40 + 7 * r;
  for (const Item& it : items) {
    const auto [i, j] = cell(it);
    EXPECT_TRUE(q.owned().contains(i, j)) << it.origin << "/" << it.serial;
  }
  EXPECT_EQ(rt().allreduce(static_cast<long>(items.size()), compas::op::sum{}), total);
}

}  // namespace
