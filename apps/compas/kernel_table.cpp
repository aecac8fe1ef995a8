#include "kernel_table.hpp"

#include <cmath>

namespace compas::app {

// Each defined in its run_<name>.cpp.
KernelSpec laplace_kernel();
KernelSpec gemm_kernel();
KernelSpec cg_kernel();
KernelSpec sort_kernel();

const std::vector<KernelSpec>& kernel_table() {
  static const std::vector<KernelSpec> table = {laplace_kernel(), gemm_kernel(), cg_kernel(),
                                                sort_kernel()};
  return table;
}

const KernelSpec* find_kernel(std::string_view name) {
  for (const KernelSpec& k : kernel_table())
    if (k.name == name) return &k;
  return nullptr;
}

std::string kernel_names() {
  std::string names;
  for (const KernelSpec& k : kernel_table()) names += (names.empty() ? "" : ", ") + k.name;
  return names;
}

std::string scaled_by_sqrt(int n0, int p) {
  return std::to_string(static_cast<long>(std::lround(n0 * std::sqrt(static_cast<double>(p)))));
}

}  // namespace compas::app
