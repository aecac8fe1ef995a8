#include "compas/runtime/runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "abort.hpp"
#include "binding_report.hpp"
#include "compas/base/env.hpp"
#include "compas/threads/barrier.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/wait.hpp"
#include "host_share.hpp"
#include "input_error.hpp"
#include "openmp.hpp"
#include "sample_wire.hpp"

namespace compas {

namespace {

namespace vars = base::vars;

// Applies one option by its flag name (without dashes); `source` names it in errors.
void apply(RuntimeOptions& o, const std::string& name, const std::string& value,
           const std::string& source) {
  if (name == "threads") {
    o.threads = static_cast<int>(base::parse_env_integer(vars::threads, value, source));
  } else if (name == "bind") {
    threads::BindSpec::parse(value);  // validates; the spec is parsed again where it is used
    o.bind = value;
  } else if (name == "wait") {
    o.wait = threads::parse_wait_policy(value);
  } else if (name == "barrier") {
    o.barrier = threads::parse_barrier_algorithm(value);
  } else if (name == "oversubscribe") {
    o.oversubscribe = base::parse_env_bool(vars::oversubscribe, value, source);
  } else if (name == "events") {
    o.events = value;
  } else if (name == "report-bindings") {
    o.report_binding = base::parse_env_bool(vars::report_binding, value, source);
  } else if (name == "openmp") {
    constexpr OpenMP kOpenMp[] = {OpenMP::automatic, OpenMP::pin, OpenMP::leave};  // its choices
    o.openmp = kOpenMp[base::parse_env_choice(vars::openmp, value, source)];
  }
}

// Each option's flag name and variable.
const struct {
  const char* name;
  const base::EnvVar* var;
} kEnv[] = {{"threads", &vars::threads},
            {"bind", &vars::bind},
            {"wait", &vars::wait},
            {"barrier", &vars::barrier},
            {"oversubscribe", &vars::oversubscribe},
            {"events", &vars::events},
            {"openmp", &vars::openmp},
            {"report-bindings", &vars::report_binding}};

RuntimeOptions environment_options() {
  RuntimeOptions o;
  for (const auto& [name, var] : kEnv)
    if (const auto v = base::env_text(*var)) apply(o, name, *v, var->name);
  return o;
}

// Without --threads and COMPAS_THREADS, OMP_NUM_THREADS gives the team size: a program ported
// from OpenMP keeps its environment. Its first value counts (a list "4,2" sets nested levels).
void threads_from_openmp(RuntimeOptions& o) {
  const char* v = std::getenv("OMP_NUM_THREADS");
  if (o.threads > 0 || !v || !*v) return;
  const std::string text = v;
  std::string first = text.substr(0, text.find(','));
  first.erase(0, first.find_first_not_of(" \t"));
  first.erase(first.find_last_not_of(" \t") + 1);
  const auto n = base::parse_integer(first, static_cast<long long>(vars::threads.min),
                                     static_cast<long long>(vars::threads.max));
  if (!n)
    throw base::EnvError("OMP_NUM_THREADS '" + text +
                         "' is not allowed: " + vars::threads.allowed() +
                         " (the first of a comma list is the number of threads)");
  o.threads = static_cast<int>(*n);
}

// compas's own flags taken out of argv (the variables first: a flag overrides its variable).
RuntimeOptions args_options(int& argc, char** argv) {
  RuntimeOptions o = environment_options();
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {  // the rest belongs to the program
      while (i < argc) argv[out++] = argv[i++];
      break;
    }
    bool known = false;
    for (const auto& [name, var] : kEnv) {
      const std::string flag = std::string("--") + name;
      const bool bare =
          std::string(name) == "oversubscribe" || std::string(name) == "report-bindings";
      if (arg == flag && bare) {
        apply(o, name, "1", flag);
        known = true;
      } else if (arg == flag) {
        if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
        apply(o, name, argv[++i], flag);
        known = true;
      } else if (arg.rfind(flag + "=", 0) == 0) {
        apply(o, name, arg.substr(flag.size() + 1), flag);
        known = true;
      }
      if (known) break;
    }
    if (!known) argv[out++] = argv[i];
  }
  argc = out;
  if (argc >= 0) argv[argc] = nullptr;
  threads_from_openmp(o);
  return o;
}

}  // namespace

RuntimeOptions RuntimeOptions::from_environment() {
  return detail::as_input_error([] {
    RuntimeOptions o = environment_options();
    threads_from_openmp(o);
    return o;
  });
}

RuntimeOptions RuntimeOptions::from_args(int& argc, char** argv) {
  return detail::as_input_error([&] { return args_options(argc, argv); });
}

struct Runtime::Impl {
  RuntimeOptions opt;
  std::unique_ptr<comm::Bootstrap> boot;
  std::unique_ptr<comm::Comm> comm;
  std::unique_ptr<comm::ProcessCollectives> coll;
  threads::Topology topo;
  std::unique_ptr<threads::Team> team;
  std::unique_ptr<perf::Profile> profile;
  std::thread::id main_thread = std::this_thread::get_id();
  std::atomic<bool> running{false};

  explicit Impl(RuntimeOptions o) : opt(std::move(o)), topo(threads::Topology::host()) {}
};

namespace {

// The PUs this process may use: the topology shows only the process's affinity mask already;
// COMPAS_CPUS (compas-run's slice) narrows it further and must lie inside it.
threads::PuSet pus_of_process(const threads::Topology& topo) {
  threads::PuSet set;
  const auto cpus = base::env_text(vars::cpus);
  if (!cpus) return threads::whole_machine(topo);
  for (int os : threads::parse_cpu_list(*cpus)) {
    const int i = topo.find_pu(os);
    if (i < 0)
      throw std::invalid_argument("COMPAS_CPUS '" + *cpus + "': cpu " + std::to_string(os) +
                                  " is not one this process may run on (its affinity mask)");
    set.pu_indices.push_back(i);
  }
  return set;
}

// Why the Runtime left OpenMP's threads where they are (they are not pinned), for the report.
std::string openmp_not_pinned(OpenMP requested) {
  std::string why;
  detail::resolve_openmp(requested, &why);
  return why.empty() ? "--openmp leave or COMPAS_OPENMP=leave" : why + ": OpenMP binds them";
}

// COMPAS_REPORT_BINDING=1 (or --report-bindings): this process's line on stderr.
void report_binding(const threads::Topology& topo, const comm::Comm& comm,
                    const threads::PuSet& within, const threads::Team& team,
                    const detail::OpenMpThreads& openmp, OpenMP requested) {
  detail::Binding b;
  b.rank = comm.rank();
  b.host = detail::host_name();
  b.affinity = comm.cpus_of(comm.rank());
  for (int i : within.pu_indices)
    b.cpus.push_back(topo.pu_list()[static_cast<std::size_t>(i)].os_index);
  std::sort(b.cpus.begin(), b.cpus.end());
  b.threads = team.binding();
  if (openmp.pinned())
    b.openmp = openmp.binding();
  else
    b.openmp_note = openmp_not_pinned(requested);
  detail::write_whole(STDERR_FILENO, detail::format_binding(b));
}

// Under a launcher, compas-run's rule: where the processes of this host have more threads than
// the cpus they were given, or had to share cores, the job runs oversubscribed, and the host's
// first rank says so in compas-run's words. Otherwise a process with more threads than its own
// cpus is refused by the placement, as alone.
bool launcher_oversubscribed(const comm::Comm& comm, bool shared_slices) {
  if (!comm.options().oversubscribed && !shared_slices) return false;
  const std::string note = detail::host_oversubscription_note(comm, shared_slices);
  if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
  return true;
}

}  // namespace

Runtime::Runtime(int& argc, char** argv) : Runtime(RuntimeOptions::from_args(argc, argv)) {}

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& m = *impl_;
  // A second job in this process fails at once on every process, before anything changes here.
  detail::install_input_handler();
  comm::Bootstrap::check_can_form();
  // When OpenMP binds (OMP_PROC_BIND, OMP_PLACES), libgomp has put this thread on its first place
  // before main(): the topology must see all of OpenMP's places, the CPUs the process started
  // with. (If the constructor fails, this thread stays on all of them.)
  detail::OpenMpSetup omp;
  omp.start = detail::widen_to_openmp_places();
  if (!omp.start.empty()) m.topo = threads::Topology::host();
  threads::PuSet within = pus_of_process(m.topo);
  // Validate everything local before the job forms, so bad input fails at once on every rank.
  const auto spec = detail::as_input_error([&] { return threads::BindSpec::parse(m.opt.bind); });
  const bool report = detail::as_input_error(
      [&] { return base::env_bool(vars::report_binding).value_or(false) || m.opt.report_binding; });
  int nthreads =
      m.opt.threads > 0 ? m.opt.threads : std::max(1, static_cast<int>(within.pu_indices.size()));
  // A launcher that shares cores on purpose (compas-run -n P -t T with P*T above the cores) says
  // so; its user asked for it.
  if (base::env_bool(vars::oversubscribed).value_or(false)) m.opt.oversubscribe = true;
  // Alone, more threads than cpus is refused here unless allowed. Under a launcher it is judged
  // once the job has formed (the host's processes, their masks and threads: below).
  const bool launched = comm::choose_bootstrap().kind != "single";
  detail::as_input_error([&] {
    threads::place_threads(m.topo, within, nthreads, spec, m.opt.oversubscribe || launched);
  });
  auto events = detail::as_input_error([&] { return perf::choose_events(m.opt.events); });

  m.boot = comm::Bootstrap::from_environment();
  // From here an uncaught error (a peer that ended while this process still forms the job with it)
  // goes through the job's handler, as after construction: a process that left first (bad input
  // seen after its Runtime was made, exit 2) ends the job with its own status, this one follows
  // without an abort of its own. Removed again when the error is caught instead.
  detail::install_terminate_handler(*this);
  struct HandlerGuard {
    Runtime* rt;
    bool built = false;
    ~HandlerGuard() {
      if (!built) detail::remove_terminate_handler(*rt);
    }
  } guard{this};
  comm::CommOptions co = comm::CommOptions::from_environment();
  co.threads = m.opt.threads;  // what the Comm counts against the host's cpus
  m.comm = std::make_unique<comm::Comm>(*m.boot, co);
  if (m.boot->size() > 1) m.coll = std::make_unique<comm::ProcessCollectives>(*m.comm);
  // Processes of this host that the launcher left on the same cpus take a share each.
  auto share =
      detail::share_host_cpus(m.topo, *m.comm, within, base::env_text(vars::cpus).has_value());
  if (share.within.pu_indices != within.pu_indices) {
    within = std::move(share.within);
    if (m.opt.threads == 0) nthreads = std::max(1, static_cast<int>(within.pu_indices.size()));
  }
  if (!share.notice.empty()) std::fprintf(stderr, "%s\n", share.notice.c_str());
  if (launched && launcher_oversubscribed(*m.comm, within.shared)) m.opt.oversubscribe = true;

  threads::TeamOptions to;
  to.threads = nthreads;
  to.bind = spec;
  to.wait = m.opt.wait;
  to.barrier = m.opt.barrier;
  to.allow_oversubscribe = m.opt.oversubscribe;
  to.within = within;
  to.job_oversubscribed = m.comm->options().oversubscribed;
  to.process = m.boot->rank();
  to.processes = m.boot->size();
  m.opt.threads = nthreads;
  // Where this thread may run before the team pins it: OpenMP's threads go back there at the end.
  omp.original = m.topo.current_thread_binding();
  m.team = std::make_unique<threads::Team>(m.topo, to);
  m.profile = std::make_unique<perf::Profile>(*m.team, std::move(events), m.boot->rank());
  omp.requested = m.opt.openmp;
  omp.cpu_of_thread = m.team->placement().pu_of_thread;
  for (int i : within.pu_indices)
    omp.process_cpus.push_back(m.topo.pu_list()[static_cast<std::size_t>(i)].os_index);
  omp.rank = m.boot->rank();
  openmp_ = std::make_unique<detail::OpenMpThreads>(m.topo, std::move(omp));
  openmp_->start();  // once openmp_ is set: the OpenMP threads it makes may read it
  if (report) report_binding(m.topo, *m.comm, within, *m.team, *openmp_, m.opt.openmp);
  guard.built = true;
}

Runtime::~Runtime() {
  detail::remove_terminate_handler(*this);
  Impl& m = *impl_;
  m.profile.reset();
  m.team.reset();
  openmp_.reset();  // after the team put this thread back: OpenMP's threads back where they were
  m.coll.reset();
  m.comm.reset();
  m.boot.reset();
}

int Runtime::process() const {
  return impl_->boot->rank();
}
int Runtime::processes() const {
  return impl_->boot->size();
}
int Runtime::processes_here() const {
  const comm::Comm& c = *impl_->comm;
  return static_cast<int>(c.hosts()[static_cast<std::size_t>(c.host_of(c.rank()))].size());
}
int Runtime::threads() const {
  return impl_->team->threads();
}
const RuntimeOptions& Runtime::options() const {
  return impl_->opt;
}
comm::Bootstrap& Runtime::bootstrap() {
  return *impl_->boot;
}
comm::Comm& Runtime::comm() {
  return *impl_->comm;
}
threads::Team& Runtime::team() {
  return *impl_->team;
}
const threads::Topology& Runtime::topology() const {
  return impl_->topo;
}
perf::Profile& Runtime::profile() {
  return *impl_->profile;
}

comm::ProcessCollectives& Runtime::collectives() {
  if (!impl_->coll)
    throw std::logic_error("Runtime::collectives: a job of one process has no process collectives");
  return *impl_->coll;
}

void Runtime::run(const std::function<void(threads::ThreadCtx&)>& body) {
  if (impl_->running.exchange(true))
    throw std::logic_error(
        "Runtime::run: called while run() is already running (run() does not nest; inside it, "
        "every thread already takes part)");
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag.store(false); }
  } done{impl_->running};
  impl_->team->run(body);
}

bool Runtime::in_run() const {
  return impl_->running.load();
}

bool Runtime::on_main_thread() const {
  return std::this_thread::get_id() == impl_->main_thread;
}

void Runtime::check_funneled(const char* call, const char* instead) const {
  if (in_run())
    throw std::logic_error(std::string(call) +
                           ": called inside Runtime::run (while it runs, from any thread); " +
                           instead);
  if (!on_main_thread())
    throw std::logic_error(std::string(call) +
                           ": called from a thread other than the one that made the Runtime, "
                           "which alone makes this call, outside Runtime::run (funneled); " +
                           instead);
}

std::vector<perf::RegionSample> Runtime::job_samples() {
  check_funneled("Runtime::job_samples", "gather the samples before run(), or between runs");
  auto mine = impl_->profile->samples();
  if (processes() == 1) return mine;
  std::vector<perf::RegionSample> all;
  for (const auto& blob : impl_->boot->allgather(detail::encode_samples(mine))) {
    auto theirs = detail::decode_samples(blob);
    all.insert(all.end(), std::make_move_iterator(theirs.begin()),
               std::make_move_iterator(theirs.end()));
  }
  return all;
}

void Runtime::barrier(threads::ThreadCtx& t) {
  t.barrier();
  if (processes() == 1) return;
  if (t.is_leader()) impl_->comm->barrier();
  t.barrier();
}

double Runtime::barrier() {  // deprecated: compas::barrier(rt)
  check_funneled("Runtime::barrier()", "inside run() the team's threads use barrier(t)");
  if (processes() > 1) impl_->comm->barrier();
  return detail::openmp_wtime();
}

void Runtime::check_root(int root_process, int root_thread) const {
  if (root_process < 0 || root_process >= processes())
    throw std::out_of_range("broadcast: root process " + std::to_string(root_process) +
                            " is outside the job: processes are 0.." +
                            std::to_string(processes() - 1));
  if (root_thread < 0 || root_thread >= impl_->team->threads())
    throw std::out_of_range("broadcast: root thread " + std::to_string(root_thread) +
                            " is outside the team: threads are 0.." +
                            std::to_string(impl_->team->threads() - 1));
}

std::pair<index, index> Runtime::process_block(index n) const {
  if (n < 0)
    throw std::invalid_argument("Runtime::process_block: " + std::to_string(n) +
                                " items: a count is 0 or more");
  const Range r = part({0, n});
  return {r.lo, r.hi};
}

std::pair<index, index> Runtime::block(const threads::ThreadCtx& t, index n) const {
  const auto [lo, hi] = process_block(n);
  const Range r = block_of({lo, hi}, t.threads(), t.thread());
  return {r.lo, r.hi};
}

Runtime::Grid Runtime::process_grid() const {
  Grid g;
  const int p = processes();
  g.rows = static_cast<int>(std::sqrt(static_cast<double>(p)));
  while (g.rows > 1 && p % g.rows != 0) --g.rows;
  g.cols = p / g.rows;
  g.row = process() / g.cols;
  g.col = process() % g.cols;
  return g;
}

}  // namespace compas
