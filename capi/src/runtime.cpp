// compas_init, compas_finalize, the job's shape, compas_barrier and compas_abort.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "handles.hpp"

using namespace compas::capi;

extern "C" int compas_init(int* argc, char*** argv, compas_runtime** rt) {
  return guard("compas_init", [&] {
    need(rt, "rt");
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
  });
}

extern "C" int compas_finalize(compas_runtime** rt) {
  return guard("compas_finalize", [&] {
    need(rt, "rt");
    compas_runtime* h = live(*rt, "rt");
    while (!h->children.empty()) {  // newest first, as the C++ objects would go
      compas_child* c = h->children.back();
      if (c->tag == Kind::array) finish_pending(*static_cast<compas_array*>(c));
      release(c);
    }
    release(h);
    *rt = nullptr;
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

extern "C" int compas_barrier(compas_runtime* rt) {
  return guard("compas_barrier", [&] { live(rt, "rt")->runtime->barrier(); });
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
