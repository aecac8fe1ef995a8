// compas_init, compas_finalize, the job's shape, compas_barrier and compas_abort.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "handles.hpp"

using namespace compas::capi;

namespace {

std::atomic<compas_runtime*> g_current{nullptr};

int init(const char* call, int* argc, char*** argv, compas_runtime** rt) {
  return guard(call, [&] {
    need(rt, "rt");
    if (g_current.load() != nullptr)  // *rt may be that runtime's handle: left as it is
      throw Error(COMPAS_ERR_STATE,
                  "this process's runtime is alive (compas_init was called, compas_finalize not "
                  "yet): one runtime per process");
    *rt = nullptr;
    if ((argc == nullptr) != (argv == nullptr))
      throw Error(COMPAS_ERR_ARG, "argc and argv are both given or both NULL");
    auto h = std::make_unique<compas_runtime>();
    if (argc != nullptr) {
      need(*argv, "*argv");
      h->runtime = std::make_unique<compas::Runtime>(*argc, *argv);
    } else {
      h->runtime = std::make_unique<compas::Runtime>(compas::RuntimeOptions::from_environment());
    }
    *rt = track(h.release());
    g_current.store(*rt);
  });
}

}  // namespace

compas_runtime* compas::capi::current_runtime() noexcept {
  return g_current.load();
}

void compas::capi::end_job() noexcept {
  set_fatal(false);  // a failure while ending (a bad handle) returns instead of recursing
  compas_fail(current_runtime());
  std::_Exit(1);  // compas_fail returned: it could not end the job
}

extern "C" int compas_init(int* argc, char*** argv, compas_runtime** rt) {
  return init("compas_init", argc, argv, rt);
}

extern "C" compas_runtime* compas_start(int* argc, char*** argv) {
  set_fatal(true);
  compas_runtime* rt = nullptr;
  init("compas_start", argc, argv, &rt);
  return rt;
}

extern "C" int compas_set_errors(compas_runtime* rt, int mode) {
  return guard("compas_set_errors", [&] {
    live(rt, "rt");
    if (mode != COMPAS_ERRORS_RETURN && mode != COMPAS_ERRORS_FATAL)
      throw Error(COMPAS_ERR_ARG, "mode " + std::to_string(mode) +
                                      ": COMPAS_ERRORS_RETURN (0) or COMPAS_ERRORS_FATAL (1)");
    set_fatal(mode == COMPAS_ERRORS_FATAL);
  });
}

extern "C" int compas_finalize(compas_runtime** rt) {
  return guard("compas_finalize", [&] {
    need(rt, "rt");
    compas_runtime* h = live(*rt, "rt");
    check_collective_thread(*h);
    h->runtime->comm().take_teardown_failure();  // not this call's
    while (!h->children.empty()) {               // newest first, as the C++ objects would go
      compas_child* c = h->children.back();
      if (c->tag == Kind::array) finish_pending(*static_cast<compas_array*>(c));
      release(c);
    }
    const std::string failure = h->runtime->comm().take_teardown_failure();
    compas_runtime* current = h;
    g_current.compare_exchange_strong(current, nullptr);
    release(h);
    *rt = nullptr;
    if (!failure.empty())  // the runtime is gone all the same
      throw compas::comm::CommError("what it destroyed could not meet every process: " + failure);
  });
}

namespace {

template <class F>
int query(const char* call, const compas_runtime* rt, int* out, F f) {
  return guard(call, [&] {
    need(out, "the result pointer");
    *out = f(*live(rt, "rt")->runtime);
  });
}

}  // namespace

extern "C" int compas_process(const compas_runtime* rt, int* rank) {
  return query("compas_process", rt, rank, [](compas::Runtime& r) { return r.process(); });
}

extern "C" int compas_processes(const compas_runtime* rt, int* count) {
  return query("compas_processes", rt, count, [](compas::Runtime& r) { return r.processes(); });
}

extern "C" int compas_threads(const compas_runtime* rt, int* count) {
  return query("compas_threads", rt, count, [](compas::Runtime& r) { return r.threads(); });
}

extern "C" int compas_rank(const compas_runtime* rt) {
  int rank = -1;
  query("compas_rank", rt, &rank, [](compas::Runtime& r) { return r.process(); });
  return rank;
}

extern "C" int compas_size(const compas_runtime* rt) {
  int count = -1;
  query("compas_size", rt, &count, [](compas::Runtime& r) { return r.processes(); });
  return count;
}

extern "C" int compas_barrier(compas_runtime* rt) {
  return guard("compas_barrier", [&] { compas::barrier(*live(rt, "rt")->runtime); });
}

extern "C" int compas_fail(compas_runtime* rt) {
  const int status = last_error_code() == COMPAS_ERR_ARG ? 2 : 1;
  return compas_abort(rt, status, compas_last_error());
}

extern "C" int compas_abort(compas_runtime* rt, int code, const char* message) {
  return guard("compas_abort", [&] {
    if (code < 1 || code > 255)
      throw Error(COMPAS_ERR_ARG,
                  "code " + std::to_string(code) + " is not an exit status: 1..255");
    const char* text = message != nullptr ? message : "";
    if (rt == nullptr) {
      std::fprintf(stderr, "compas: %s\n", text);
      std::fflush(nullptr);
      std::exit(code);
    }
    live(rt, "rt")->runtime->abort(code, text);
  });
}
