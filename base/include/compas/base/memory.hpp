// What this host can give an allocation now: the memory available (MemAvailable in
// /proc/meminfo: free memory and what the kernel can reclaim, so what other processes use is
// counted), the memory cgroup's limit less what is in use there (cgroup v1 memory.limit_in_bytes
// less memory.usage_in_bytes, v2 memory.max less memory.current, the inactive file cache left out
// of the usage since the kernel reclaims it first; of this process's cgroup and every cgroup
// above it) and, for shared mappings (windows: UCX maps them from files in /dev/shm), the free
// space of /dev/shm; the smallest of them. Every size that allocates is checked against it before
// anything is allocated, so that an allocation beyond memory is refused with a message instead of
// waking the kernel's OOM killer (which kills other processes first), also when allocations that
// each fit the host add up to more than it has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace compas::base {

// Installed physical memory in bytes (sysconf), 0 when unknown.
std::uint64_t physical_memory_bytes();

// MemAvailable of /proc/meminfo in bytes, 0 when unknown.
std::uint64_t available_memory_bytes();

// What an allocation lives in: private memory (malloc, mmap) or a shared mapping.
enum class Mapping { private_memory, shared };

// One bound on what this host can give: its bytes and what it is, e.g. "the memory available
// (MemAvailable in /proc/meminfo, of 16 GiB installed)", "the memory cgroup's limit less what is
// in use (/sys/fs/cgroup/memory/job/memory.limit_in_bytes: 256 MiB, 160.3 MiB in use)", "the free
// space of /dev/shm".
struct MemoryBound {
  std::uint64_t bytes = 0;
  std::string what;
};

// The smallest bound for `mapping` (installed physical memory stands in for MemAvailable where
// /proc/meminfo has none). When nothing is known (no meminfo or sysconf answer, no cgroup limit,
// no /dev/shm), `bytes` is UINT64_MAX and `what` says so.
MemoryBound memory_limit(Mapping mapping);

// The memory cgroup's bound alone (the smallest limit less what is in use along this process's
// cgroup and its ancestors), nullopt when there is none or no memory cgroup is mounted.
std::optional<MemoryBound> cgroup_memory_limit();

// "1 GiB (1073741824 bytes)".
std::string bytes_text(std::uint64_t bytes);

// "<what> 1 GiB (1073741824 bytes), more than this host can give: at most 256 MiB (268435456
// bytes), <limit.what>"; `what` ends with its verb ("--size 1GiB needs").
std::string memory_refusal(const std::string& what, std::uint64_t bytes, const MemoryBound& limit);

// Throws std::invalid_argument with memory_refusal's message when `bytes` exceed
// memory_limit(mapping). `what` names the request and ends with its verb, e.g. "--size 1TiB needs".
void check_memory(const std::string& what, std::uint64_t bytes,
                  Mapping mapping = Mapping::private_memory);

}  // namespace compas::base
