// Arrays known by the address of their local block: compas_alloc, compas_array_of and the calls
// that take that address instead of a handle.
#include "array_impl.hpp"

using namespace compas::capi;

namespace {

// The live array of the process's runtime whose local block starts at data.
compas_array* array_at(const void* data) {
  if (data == nullptr) throw Error(COMPAS_ERR_HANDLE, "data is NULL");
  if (compas_runtime* rt = current_runtime())
    for (compas_child* c : rt->children)
      if (c->tag == Kind::array) {
        auto* a = static_cast<compas_array*>(c);
        if (a->impl->data(nullptr) == data) return a;
      }
  throw Error(COMPAS_ERR_HANDLE,
              "data is not the local block of a live array (the address compas_alloc or "
              "compas_array_data gave, not an element inside it; destroyed or never made)");
}

// array_at(data), or nullptr with the failure recorded under `call`.
compas_array* find(const char* call, const void* data) {
  compas_array* a = nullptr;
  guard(call, [&] { a = array_at(data); });
  return a;
}

}  // namespace

extern "C" void* compas_alloc(compas_runtime* rt, int type, int dims, const int64_t* lo,
                              const int64_t* hi, const compas_array_options* options) {
  compas_array* a = nullptr;
  if (create_array("compas_alloc", rt, type, dims, lo, hi, options, COMPAS_LAYOUT_PADDED, &a) !=
      COMPAS_OK)
    return nullptr;
  void* data = nullptr;
  if (compas_array_data(a, &data, nullptr) != COMPAS_OK) return nullptr;
  return data;
}

extern "C" compas_array* compas_array_of(const void* data) {
  return find("compas_array_of", data);
}

extern "C" int compas_bounds(const void* data, int64_t* lo, int64_t* hi) {
  compas_array* a = find("compas_bounds", data);
  return a != nullptr ? compas_array_bounds(a, lo, hi) : last_error_code();
}

extern "C" int compas_exchange_halos(void* data) {
  compas_array* a = find("compas_exchange_halos", data);
  return a != nullptr ? compas_array_exchange(a) : last_error_code();
}

extern "C" int compas_accumulate_halos(void* data) {
  compas_array* a = find("compas_accumulate_halos", data);
  return a != nullptr ? compas_array_accumulate_halos(a) : last_error_code();
}

extern "C" int compas_free(void* data) {
  compas_array* a = find("compas_free", data);
  return a != nullptr ? compas_array_destroy(&a) : last_error_code();
}
