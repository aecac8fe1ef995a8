#include "abort.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "binding_report.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas {

namespace {

// How long a process whose uncaught error another process caused or also has waits for that
// process to end the job (its launcher then ends this one, without a line of its own): process 0
// (or a group's first member: CollectiveError::speaker) for a CollectiveError, which every process
// of the call throws alike; the peer a CommError or a BootstrapError names, which has failed or
// aborted itself. Past it, this one says its error and ends the job.
constexpr auto kFollow = std::chrono::seconds(5);

std::atomic<Runtime*> g_runtime{nullptr};
std::terminate_handler g_previous = nullptr;

// stdout and stderr written out, unless another thread holds them (it might never let go).
void flush_if_free(FILE* f) {
  if (::ftrylockfile(f) != 0) return;
  std::fflush(f);
  ::funlockfile(f);
}

std::string one_line(int rank, std::string_view message) {
  std::string line = "compas: process " + std::to_string(rank) + ": ";
  for (char c : message) line += c == '\n' ? ' ' : c;
  return line + "\n";
}

// What the uncaught exception says, and whether another process ends the job for it: every
// process threw it alike and this is not process 0, or it names a peer that failed first.
std::string uncaught(int rank, bool* follow) {
  *follow = false;
  const std::exception_ptr e = std::current_exception();
  if (!e) return "std::terminate was called without an exception";
  try {
    std::rethrow_exception(e);
  } catch (const CollectiveError& x) {
    *follow = rank != x.speaker();
    return x.what();
  } catch (const comm::CommError& x) {
    *follow = x.rank() >= 0 && x.rank() != rank;
    return x.what();
  } catch (const comm::BootstrapError& x) {
    *follow = x.rank() >= 0 && x.rank() != rank;
    return x.what();
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an uncaught exception that is not a std::exception";
  }
}

[[noreturn]] void exit_with_line(const char* what, int status) {
  flush_if_free(stdout);
  flush_if_free(stderr);
  std::string line = "compas: ";
  line += what;
  line += "\n";
  detail::write_whole(STDERR_FILENO, line);
  std::_Exit(status);
}

// Errors seen while no Runtime lives, which every process of the job meets alike: bad input (one
// line, status 2, what compas's tools do for it) and a second job in a process (one line, status
// 1).
void exit_before_job() {
  const std::exception_ptr e = std::current_exception();
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const InputError& x) {
    exit_with_line(x.what(), 2);
  } catch (const comm::SecondJobError& x) {
    exit_with_line(x.what(), 1);
  } catch (...) {
  }
}

[[noreturn]] void on_terminate() {
  Runtime* rt = g_runtime.load();
  if (!rt) {
    exit_before_job();
    if (g_previous) g_previous();
    std::abort();
  }
  bool follow = false;
  const std::string what = uncaught(rt->process(), &follow);
  if (follow) std::this_thread::sleep_for(kFollow);
  rt->abort(1, what);
}

}  // namespace

void Runtime::abort(int code, std::string_view message) {
  if (code < 1 || code > 255)
    throw std::invalid_argument("Runtime::abort: exit code " + std::to_string(code) +
                                " is not allowed: 1..255 (0 would not end the job)");
  static std::atomic<bool> ending{false};
  if (ending.exchange(true))  // another thread is ending the job: it will end this one too
    for (;;) ::pause();
  flush_if_free(stdout);
  flush_if_free(stderr);
  detail::write_whole(STDERR_FILENO, one_line(process(), message));
  bootstrap().abort_job(code);
  std::_Exit(code);  // abort_job does not return
}

void detail::install_input_handler() {
  static const bool installed = [] {
    g_previous = std::set_terminate(on_terminate);
    return true;
  }();
  (void)installed;
}

void detail::install_terminate_handler(Runtime& rt) {
  install_input_handler();
  Runtime* none = nullptr;
  g_runtime.compare_exchange_strong(none, &rt);
}

void detail::remove_terminate_handler(const Runtime& rt) {
  Runtime* mine = const_cast<Runtime*>(&rt);
  g_runtime.compare_exchange_strong(mine, nullptr);
}

}  // namespace compas
