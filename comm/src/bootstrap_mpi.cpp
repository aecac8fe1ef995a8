// The mpi bootstrap (built with COMPAS_WITH_MPI): rank and size of MPI_COMM_WORLD, collectives on
// a duplicate of it so they never match the program's own MPI messages.
// The C API only: the deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <mutex>

#include "bootstrap_impl.hpp"

namespace compas::comm {

namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

void check(int code, const char* call) {
  if (code != MPI_SUCCESS)
    throw BootstrapError(std::string("bootstrap: ") + call + " failed: " + mpi_error_text(code));
}

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap() {
    int initialized = 0, finalized = 0;
    check(MPI_Initialized(&initialized), "MPI_Initialized");
    check(MPI_Finalized(&finalized), "MPI_Finalized");
    if (finalized) throw BootstrapError("bootstrap: MPI has already been finalized");
    if (!initialized) {
      // Ask for full thread support; what is granted does not matter, calls are serialized here.
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      owns_mpi_ = true;
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }

  ~MpiBootstrap() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }

  [[noreturn]] void abort_job(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);  // ends every process of the job, this one included
    std::_Exit(code);
  }

  std::vector<std::string> allgather(const std::string& mine) override {
    std::lock_guard lock(mu_);
    if (mine.size() > static_cast<std::size_t>(INT_MAX))
      throw std::invalid_argument("allgather: blob of " + std::to_string(mine.size()) +
                                  " bytes exceeds MPI's 2 GiB count limit");
    int n = static_cast<int>(mine.size());
    std::vector<int> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    std::vector<int> displs(sizes.size());
    long long total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      displs[r] = static_cast<int>(total);
      total += sizes[r];
      if (total > INT_MAX)
        throw BootstrapError("bootstrap: allgather of " + std::to_string(total) +
                             "+ bytes exceeds MPI's 2 GiB count limit");
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), sizes.data(), displs.data(),
                         MPI_BYTE, comm_),
          "MPI_Allgatherv");
    std::vector<std::string> out(sizes.size());
    for (std::size_t r = 0; r < sizes.size(); ++r)
      out[r] = all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(sizes[r]));
    return out;
  }

  void barrier() override {
    std::lock_guard lock(mu_);
    check(MPI_Barrier(comm_), "MPI_Barrier");
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool owns_mpi_ = false;
  std::mutex mu_;
};

}  // namespace

namespace detail {
bool mpi_finalized() {
  int finalized = 0;
  check(MPI_Finalized(&finalized), "MPI_Finalized");
  return finalized != 0;
}

std::unique_ptr<Bootstrap> make_mpi_bootstrap() {
  return std::make_unique<MpiBootstrap>();
}
}  // namespace detail

}  // namespace compas::comm
