// Placement: which PU each thread of a team runs on, and which PUs each of the k processes
// sharing one host may use. Policies: compact, scatter, sockets, or an explicit cpu
// list. Two threads never share a PU unless oversubscription is explicitly allowed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compas/threads/topology.hpp"

namespace compas::threads {

enum class BindPolicy {
  compact,  // fill cores in order (socket 0 first), one thread per core; SMT siblings last
  scatter,  // round-robin over sockets: t0 socket 0, t1 socket 1, ...
  sockets,  // T/S threads per socket, the threads of a socket contiguous
  list,     // explicit OS cpu list, thread t on the t-th cpu
};

struct BindSpec {
  BindPolicy policy = BindPolicy::compact;
  std::vector<int> cpus;  // for BindPolicy::list: OS PU indices

  // "compact", "scatter", "sockets" or a cpu list like "0,2,4-7". Throws std::invalid_argument.
  static BindSpec parse(const std::string& text);
  std::string to_string() const;
};

// Parses "0,2,4-7" into {0,2,4,5,6,7}. Throws std::invalid_argument naming the bad part.
std::vector<int> parse_cpu_list(const std::string& text);
std::string format_cpu_list(const std::vector<int>& cpus);

// The PUs a process may use: all of the topology, or a slice of it.
struct PuSet {
  std::vector<int> pu_indices;  // indices into Topology::pu_list(), topology order
  bool shared = false;          // true when other processes of this host use the same PUs
};

// The slice of the host for process `index` of `count` processes on it: cores are split into
// `count` contiguous blocks (whole sockets when count divides the sockets), each process gets all
// PUs of its cores. When count exceeds the cores, processes share cores round-robin and the
// slice is marked shared. Throws std::invalid_argument on index/count out of range.
PuSet process_slice(const Topology& topo, int index, int count);
PuSet whole_machine(const Topology& topo);

// What a launcher says when the threads of a host's processes outnumber its cpus (compas-run, and
// the Runtime under mpirun or srun): "2 processes × 3 threads on 2 cores: oversubscribed, waits
// will back off" ("on 2 cores (4 PUs)" where cores have several PUs). `threads` holds each
// process's count ("× 2-3 threads" where they differ).
std::string oversubscription_note(const std::vector<int>& threads, int cores, int pus);

struct Placement {
  std::vector<int> pu_of_thread;      // OS PU index for each thread
  std::vector<int> socket_of_thread;  // logical socket for each thread
  // Some PU holds two or more threads of this team, or the PUs are shared with other processes
  // (a shared slice): either way a waiting thread may hold a core another one needs.
  bool oversubscribed = false;

  std::string describe() const;  // "t0->cpu0 t1->cpu1 ..."
  int sockets_used() const;
};

// Places `threads` threads on `within` (whole machine by default). More threads than PUs is an
// error unless allow_oversubscribe, in which case threads wrap around the PUs.
Placement place_threads(const Topology& topo, int threads, const BindSpec& spec,
                        bool allow_oversubscribe = false);
Placement place_threads(const Topology& topo, const PuSet& within, int threads,
                        const BindSpec& spec, bool allow_oversubscribe = false);

// Working-set size past which streaming (non-temporal) stores are worth timing against ordinary
// ones: what the threads of `placement` have of the cache level below the last (L2 where there is
// an L3), one instance per distinct instance they sit under. Not the last level itself: virtual
// machines report L3s that are not there (an AMD guest: 508 MB of "L3" per core, DRAM latency past
// 16 MiB). Between this and the last level either kind may win: callers time both.
std::uint64_t nt_threshold(const Topology& topo, const Placement& placement);

}  // namespace compas::threads
