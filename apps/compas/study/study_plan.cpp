// compas study's plan (study_plan.hpp).
#include "study_plan.hpp"

#include "../kernel_table.hpp"
#include "stream_sizes.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compas/base/memory.hpp"
#include "compas/base/number.hpp"
#include "compas/base/size.hpp"

namespace compas::app {

namespace {

namespace fs = std::filesystem;

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path in /proc/self/exe");
  return std::string(buf, static_cast<std::size_t>(n));
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> split_list(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// ---- the plan --------------------------------------------------------------------------------

struct Shape {
  int p = 1, t = 1;
  bool over = false;
};

std::vector<Shape> parse_grid(const std::string& grid, int cores) {
  std::vector<Shape> shapes;
  if (grid == "auto") {
    for (int p = 1; p <= cores; ++p)
      for (int t = 1; p * t <= cores; ++t) shapes.push_back({p, t, false});
    shapes.push_back({2, cores, true});  // one oversubscribed point: 2 x cores threads
    return shapes;
  }
  for (const auto& item : split_list(grid, ',')) {
    const auto x = item.find('x');
    const auto p =
        x == std::string::npos ? std::nullopt : base::parse_integer(item.substr(0, x), 1, 1024);
    const auto t =
        x == std::string::npos ? std::nullopt : base::parse_integer(item.substr(x + 1), 1, 1024);
    if (!p || !t)
      throw std::invalid_argument("--grid '" + grid + "': '" + item +
                                  "' is not PxT (e.g. 1x1,1x2,2x1): allowed is auto or a list of "
                                  "PxT with P, T in 1..1024");
    shapes.push_back({int(*p), int(*t), *p * *t > cores});
  }
  if (shapes.empty()) throw std::invalid_argument("--grid is empty: auto or a list of PxT");
  return shapes;
}

}  // namespace

std::string study_kernel_names() {
  return kernel_names();
}

std::string rate_field(const std::string& kernel) {
  const KernelSpec* k = find_kernel(kernel);
  return k ? k->rate_field : "seconds";
}

namespace {

std::vector<std::string> kernel_list(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& k : split_list(text, ',')) {
    if (!find_kernel(k))
      throw std::invalid_argument("--kernels: '" + k + "' is not a kernel compas study runs: " +
                                  "allowed are " + study_kernel_names());
    out.push_back(k);
  }
  if (out.empty())
    throw std::invalid_argument("--kernels is empty: allowed are " + study_kernel_names());
  return out;
}

}  // namespace

void check_launcher(const std::string& launcher) {
  if (launcher.empty()) return;
  if (launcher.find("{P}") == std::string::npos)
    throw std::invalid_argument("--launcher '" + launcher +
                                "' has no {P}: the template must place the process count, e.g. "
                                "\"mpirun -n {P}\" or \"srun -n {P} -c {T}\"");
}

int host_cores(const threads::Topology& topo) {
  return std::max(1, topo.cores());
}

namespace {

// Under a cluster launcher a P x T beyond this host's cores would oversubscribe nodes like this
// one, and its times would measure the oversubscription: such points run only when asked for.
// Here (compas-run) the one oversubscribed point of an auto grid is part of the study.
bool leaves_out(const StudyArgs& a, const Shape& sh) {
  return sh.over && !a.launcher.empty() && !a.oversubscribe;
}

}  // namespace

void check_scaling(const std::string& scaling) {
  if (scaling != "strong" && scaling != "weak")
    throw std::invalid_argument("--scaling '" + scaling +
                                "' is not allowed: strong (fixed sizes) or weak (size per core "
                                "fixed)");
}

namespace {

// A kernel whose sizes are fixed (NPB's classes) has no size per core to hold.
bool weak_scales(const std::string& kernel) {
  const KernelSpec* k = find_kernel(kernel);
  return k && k->weak_series;
}

}  // namespace

std::vector<std::string> left_out_points(const StudyArgs& a, int cores) {
  std::vector<std::string> lines;
  if (a.scaling == "weak")
    for (const auto& k : split_list(a.kernels, ','))
      if (!weak_scales(k))
        lines.push_back("left out " + k +
                        " under --scaling weak: NPB's classes fix its size, there is no size "
                        "per core to hold");
  for (const auto& sh : parse_grid(a.grid, cores))
    if (leaves_out(a, sh))
      lines.push_back(fmt::format(
          "left out {} x {}: P x T = {} is more than the {} cores of this host (oversubscribed; "
          "--oversubscribe runs it under --launcher)",
          sh.p, sh.t, sh.p * sh.t, cores));
  return lines;
}

namespace {

// A run far beyond its estimate is stuck: by default it gets 20 times the estimate, 2 minutes
// at least.
double run_timeout(const StudyArgs& a, double estimate_s) {
  return a.run_timeout_s > 0 ? a.run_timeout_s : std::max(120.0, std::ceil(20 * estimate_s));
}

// The command that runs `args` (a compas subcommand) on a P x T job.
std::vector<std::string> job_argv(const StudyArgs& a, const std::string& compas,
                                  const std::string& compas_run, int p, int t,
                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (a.launcher.empty()) {
    argv = {compas_run, "-n", std::to_string(p), "-t", std::to_string(t)};
  } else {
    argv = split_words(
        replace_all(replace_all(a.launcher, "{P}", std::to_string(p)), "{T}", std::to_string(t)));
  }
  argv.push_back(compas);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Every run writes its raw/ID.json by rename only (common.hpp): a link, FIFO or device planted
// under that name between the study removing the old file and the run writing is replaced, never
// written through.
const std::string kReplaceOutputs = "--replace-outputs";

// What every step of the plan needs to know of the job around it.
struct PlanContext {
  const StudyArgs& a;
  int cores;
  double scale;  // 1.0 = the default 10 minutes
  std::string compas, compas_run;
  StreamSizes streams;

  std::string raw(const std::string& id) const {
    return (fs::path(a.out) / "raw" / (id + ".json")).string();
  }
  std::vector<std::string> job(int p, int t, const std::vector<std::string>& args) const {
    return job_argv(a, compas, compas_run, p, t, args);
  }
};

// The machine: topology, bandwidth, caches, barriers, put latency and bandwidth.
void add_characterize_steps(const PlanContext& c, std::vector<Step>& plan) {
  const double scale = c.scale;
  const std::string threads_all = "1-" + std::to_string(c.cores);
  // At least 4x the last-level caches at every budget (stream_sizes.hpp); a GiB of membw takes
  // about 7 s over two thread counts and four kernels, of the cache curve about 3 s.
  const std::string membw_size = std::to_string(c.streams.membw >> 20) + "MiB";
  const std::string cache_max = std::to_string(c.streams.cache_max >> 20) + "MiB";
  const double membw_gib = double(c.streams.membw) / double(1ull << 30);
  const double cache_gib = double(c.streams.cache_max) / double(1ull << 30);
  const std::string repeats = scale >= 1 ? "5" : "2";
  const std::string target_ms = scale >= 1 ? "10" : "2";
  auto add = [&](std::string id, std::string title, std::vector<std::string> argv, double est) {
    plan.push_back({std::move(id), std::move(title), "characterize", std::move(argv), est});
  };
  add("topology", "topology",
      {c.compas, "topology", "--quiet", "--json", c.raw("topology"), kReplaceOutputs}, 1);
  add("membw", "memory bandwidth vs threads",
      {c.compas, "membw", "--threads", threads_all, "--size", membw_size, "--repeats", repeats,
       "--quiet", "--json", c.raw("membw"), kReplaceOutputs},
      40 * scale + 7 * membw_gib);
  // The loaded-latency curve (a short one): the chaser and at least one traffic thread.
  if (c.cores >= 2)
    add("loaded_latency", "loaded latency (latency against bandwidth)",
        {c.compas, "membw", "--loaded-latency", "--mix", "read,rw", "--delays",
         scale >= 1 ? "auto" : "0,100,300,1000,3000,10000", "--repeats", repeats, "--size",
         std::to_string(std::max<std::uint64_t>(c.streams.membw, scale >= 0.3 ? 256ull << 20 : 0) >>
                        20) +
             "MiB",
         "--quiet", "--json", c.raw("loaded_latency"), kReplaceOutputs},
        (scale >= 1 ? 30 : 4) + 5 * scale + 4 * membw_gib);
  add("cache", "cache working-set curve",
      {c.compas, "cache", "--max", cache_max, "--repeats", repeats, "--quiet", "--json",
       c.raw("cache"), kReplaceOutputs},
      40 * scale + 3 * cache_gib);
  add("barrier_threads", "thread barriers",
      {c.compas, "barrier", "--threads", threads_all, "--repeats", repeats, "--target-ms",
       target_ms, "--quiet", "--json", c.raw("barrier_threads"), kReplaceOutputs},
      30 * scale);
  for (int p : {2, 4}) {
    if (p > 2 && p > c.cores) continue;
    const std::string id = "barrier_p" + std::to_string(p);
    add(id, "process barrier, P=" + std::to_string(p),
        c.job(p, 1,
              {"barrier", "--repeats", repeats, "--target-ms", target_ms, "--quiet", "--json",
               c.raw(id), kReplaceOutputs}),
        5 * scale + 1);
  }
  add("pingpong", "put latency and bandwidth",
      c.job(2, 1,
            {"pingpong", "--max-size", scale >= 1 ? "16MiB" : "1MiB", "--repeats", repeats,
             "--quiet", "--json", c.raw("pingpong"), kReplaceOutputs}),
      30 * scale + 2);
}

struct KernelPoint {
  std::string kernel;
  StudySize size;
  Shape shape;
  std::string series;     // "laplace n=640", "laplace n=1024*sqrt(p) (weak)"
  std::string id_prefix;  // "laplace_n640", "laplace_weak"
};

// Run `rep` of `reps` of one kernel point.
Step kernel_step(const PlanContext& c, const KernelPoint& pt, int rep, int reps) {
  const Shape& sh = pt.shape;
  Step s;
  s.point = pt.id_prefix + "_p" + std::to_string(sh.p) + "t" + std::to_string(sh.t);
  s.id = rep == 1 ? s.point : s.point + "_r" + std::to_string(rep);
  s.title = fmt::format("{} {} on {} x {}{}{}", pt.kernel, pt.size.label, sh.p, sh.t,
                        sh.over ? " (oversubscribed)" : "",
                        reps > 1 ? fmt::format(", run {} of {}", rep, reps) : "");
  s.kind = "kernel";
  std::vector<std::string> args = {"run", pt.kernel};
  args.insert(args.end(), pt.size.args.begin(), pt.size.args.end());
  // Every point times at least `min_timed` seconds (a point of a millisecond measures the timer
  // and the noise): the kernel runs more iterations to reach it and records them.
  const double min_timed = c.scale >= 0.3 ? 0.25 : 0.1;
  for (const auto& x : {std::string("--quiet"), std::string("--json"), c.raw(s.id), kReplaceOutputs,
                        std::string("--min-seconds"), fmt::format("{:g}", min_timed)})
    args.push_back(x);
  if (c.a.vary_work && rep > 1) {  // runs of one point made to do different work (tests)
    args.push_back("--work-factor");
    args.push_back(std::to_string(rep));
  }
  if (!c.a.launcher.empty()) {
    args.push_back("--threads");
    args.push_back(std::to_string(sh.t));
  }
  s.argv = c.job(sh.p, sh.t, args);
  s.estimate_s = 0.5 + 2 * min_timed + pt.size.seconds_1x1 / std::min(sh.p * sh.t, c.cores);
  s.kernel = pt.kernel;
  s.procs = sh.p;
  s.threads = sh.t;
  s.oversubscribed = sh.over;
  s.size = pt.size.label;
  s.series = pt.series;
  s.rep = rep;
  s.reps = reps;
  return s;
}

}  // namespace

int study_repeats(const StudyArgs& a) {
  if (a.repeats > 0) return a.repeats;
  return a.budget >= 60 ? 7 : a.budget >= 20 ? 5 : 3;
}

std::uint64_t study_stream_size(const StudyArgs& a) {
  if (a.stream_size.empty()) return 0;
  const std::uint64_t b = base::parse_size(a.stream_size, base::SizeSyntax::bytes, "--stream-size");
  if (b < (1ull << 20) || b % (1ull << 20) != 0)
    throw std::invalid_argument("--stream-size '" + a.stream_size +
                                "' is not allowed: a whole number of MiB, at least 1 MiB (e.g. "
                                "64MiB, 1GiB)");
  base::check_memory("--stream-size '" + a.stream_size + "' needs", b);  // exit 2 before any run
  return b;
}

std::vector<Step> make_plan(const StudyArgs& a, const threads::Topology& topo) {
  const std::string compas = self_exe();
  const double scale = std::clamp(a.budget / 10.0, 0.02, 100.0);
  const PlanContext c{a,
                      host_cores(topo),
                      scale,
                      compas,
                      (fs::path(compas).parent_path() / "compas-run").string(),
                      stream_sizes(topo, scale, base::memory_limit(base::Mapping::private_memory),
                                   study_stream_size(a))};
  const auto shapes = parse_grid(a.grid, c.cores);
  std::vector<Step> plan;
  add_characterize_steps(c, plan);
  std::vector<KernelPoint> points;
  for (const auto& k : kernel_list(a.kernels)) {
    const KernelSpec& spec = *find_kernel(k);  // kernel_list checked the names
    if (a.scaling == "weak") {
      if (!spec.weak_series) continue;  // said by left_out_points
      const WeakSeries weak = spec.weak_series(c.scale);
      for (const auto& sh : shapes)
        if (!leaves_out(a, sh))
          points.push_back(
              {k, weak.at(sh.p * sh.t), sh, k + " " + weak.label + " (weak)", k + "_weak"});
      continue;
    }
    for (const auto& sz : spec.study_sizes(c.scale))
      for (const auto& sh : shapes)
        if (!leaves_out(a, sh))
          points.push_back(
              {k, sz, sh, k + " " + sz.label, k + "_" + replace_all(sz.label, "=", "")});
  }
  // Run r of every point before run r + 1 of any: a slow minute of the machine then widens the
  // spread of many points a little instead of shifting a few.
  const int reps = study_repeats(a);
  for (int rep = 1; rep <= reps; ++rep)
    for (const auto& pt : points) plan.push_back(kernel_step(c, pt, rep, reps));
  for (auto& s : plan) s.timeout_s = run_timeout(a, s.estimate_s);
  return plan;
}

}  // namespace compas::app
