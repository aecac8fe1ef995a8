#include "binding_report.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>

#include "compas/threads/placement.hpp"

namespace compas::detail {

namespace {

// "0->cpu 1, 1->cpus 2-3"
std::string per_thread(const std::vector<std::vector<int>>& cpus) {
  std::string s;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const auto& c = cpus[i];
    s += (i ? ", " : "") + std::to_string(i) + (c.size() == 1 ? "->cpu " : "->cpus ") +
         (c.empty() ? std::string("?") : threads::format_cpu_list(c));
  }
  return s;
}

}  // namespace

std::string format_binding(const Binding& b) {
  std::string s = "compas: binding rank " + std::to_string(b.rank) + " on host " + b.host +
                  ": cpus " + threads::format_cpu_list(b.cpus) + " (affinity " +
                  threads::format_cpu_list(b.affinity) + "); threads " + per_thread(b.threads);
  if (!b.openmp.empty())
    s += "; openmp " + per_thread(b.openmp);
  else
    s += "; openmp not pinned (" + b.openmp_note + ")";
  return s + "\n";
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "?";
  return name;
}

void write_whole(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to say it: the job goes on
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace compas::detail
