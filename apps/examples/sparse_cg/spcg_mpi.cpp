// spcg_openmp.cpp as an MPI + OpenMP program, the way it is usually written by hand: the same
// problem (README.md), options, residual history (bit for bit) and verification, the rows of the
// global grid split over the P processes by z-planes. Run it with
// `mpirun -n P spcg_mpi [--nx N] [--ny N] [--nz N] [--iters K] [--tol T] [--planes C1,...,CP]`
// (OMP_NUM_THREADS threads per process).
//
//  - --planes gives each process's number of z-planes (each >= 1, summing to nz); by default
//    they are proportional to 1, 2, ..., P (unequal whenever nz allows): process k owns rows
//    [first_k, first_k + planes_k * nx * ny) of the global numbering.
//  - Each process stores its rows in CSR form with int32 column indices into [owned | externals]:
//    an owned column c is c - first, an off-process column (an "external") nloc + its place in
//    the sorted list of the externals, which is grouped by owner since the owners' rows are
//    contiguous and in rank order.
//  - Setup: each process tells every owner which of its rows it needs (MPI_Alltoall of the
//    counts, then the lists of global rows); the owner keeps them as local rows to send.
//  - Every SpMV first exchanges the externals of its vector: MPI_Irecv straight into the
//    externals part of the vector, the needed entries packed and sent with MPI_Isend.
//  - Dot products: one partial sum per z-plane, MPI_Allreduce (SUM) of the nz partials, each of
//    which one process gave and the others 0, then added in plane order: the same additions in
//    the same order as spcg_openmp.cpp, whatever P and OMP_NUM_THREADS.
//  - MPI_Init_thread(FUNNELED): only the main thread calls MPI, between the OpenMP loops.
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  int nx = 64, ny = 64, nz = 64, iters = 50;
  double tol = 0.0;
  std::vector<int> planes;  // z-planes per process
};

struct BadInput {
  std::string message;
};

// This process's part of the grid: z-planes [z0, z0 + nzl), rows [first, first + nloc).
struct Part {
  int rank = 0, size = 1, z0 = 0, nzl = 0;
  long plane = 0, first = 0, nloc = 0;
  std::vector<int> plane_start;  // first z-plane of every process, and nz at the end
};

struct Csr {
  std::vector<int> row_ptr, col;
  std::vector<double> val;
  std::vector<long> externals;  // global rows of the columns nloc, nloc + 1, ...
};

// Who sends what to whom in every SpMV.
struct Exchange {
  std::vector<int> recv_rank, recv_offset, recv_count;  // externals from each owner
  std::vector<int> send_rank, send_ptr, send_rows;      // local rows each process needs
  std::vector<double> send_buf;
  std::vector<MPI_Request> requests;
};

int parse_int(const char* name, const std::string& text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
    throw BadInput{std::string(name) + " '" + text + "': an integer from " + std::to_string(lo) +
                   " to " + std::to_string(hi) + " is allowed"};
  return static_cast<int>(v);
}

double parse_tol(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(v >= 0.0 && v < 1.0))
    throw BadInput{"--tol '" + text + "': a number from 0 (no tolerance) to below 1 is allowed"};
  return v;
}

std::vector<int> parse_planes(const std::string& text, int nz) {
  std::vector<int> counts;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    counts.push_back(parse_int("--planes entry", text.substr(at, comma - at), 1, nz));
    at = comma + 1;
  }
  return counts;
}

// 1 plane each, the other nz - P in proportion to 1, 2, ..., P (rounded down, cumulatively).
std::vector<int> default_planes(int nz, int p) {
  std::vector<int> counts(p);
  const long spare = nz - p, total = static_cast<long>(p) * (p + 1) / 2;
  long before = 0;
  for (int k = 0; k < p; ++k) {
    const long upto = spare * ((k + 1L) * (k + 2) / 2) / total;
    counts[k] = static_cast<int>(1 + upto - before);
    before = upto;
  }
  return counts;
}

void check_planes(const Options& o, int p, const std::string& given) {
  long sum = 0;
  for (int c : o.planes) sum += c;
  if (static_cast<int>(o.planes.size()) != p || sum != o.nz)
    throw BadInput{"--planes '" + given + "': " + std::to_string(p) +
                   " counts (one per process), each >= 1, summing to nz " + std::to_string(o.nz) +
                   " are allowed"};
}

Options parse(int argc, char** argv, int p) {
  Options o;
  std::string planes;
  bool planes_given = false;
  for (int k = 1; k < argc; k += 2) {
    const std::string flag = argv[k];
    if (k + 1 >= argc) throw BadInput{flag + ": a value is needed after it"};
    const std::string v = argv[k + 1];
    if (flag == "--nx")
      o.nx = parse_int("--nx", v, 1, 1024);
    else if (flag == "--ny")
      o.ny = parse_int("--ny", v, 1, 1024);
    else if (flag == "--nz")
      o.nz = parse_int("--nz", v, 1, 1024);
    else if (flag == "--iters")
      o.iters = parse_int("--iters", v, 1, 1000000);
    else if (flag == "--tol")
      o.tol = parse_tol(v);
    else if (flag == "--planes")
      planes = v, planes_given = true;
    else
      throw BadInput{"unknown option '" + flag +
                     "': --nx, --ny, --nz, --iters, --tol or --planes is allowed"};
  }
  if (27.0 * o.nx * o.ny * o.nz > 2147483647.0)
    throw BadInput{"grid " + std::to_string(o.nx) + " x " + std::to_string(o.ny) + " x " +
                   std::to_string(o.nz) +
                   ": at most 2^31 - 1 nonzeros (int32 indices) are allowed"};
  if (o.nz < p)
    throw BadInput{"--nz " + std::to_string(o.nz) + ": at least one z-plane per process (" +
                   std::to_string(p) + ") is needed"};
  o.planes = planes_given ? parse_planes(planes, o.nz) : default_planes(o.nz, p);
  check_planes(o, p, planes);
  return o;
}

Part make_part(const Options& o, int rank, int size) {
  Part part;
  part.rank = rank;
  part.size = size;
  part.plane = static_cast<long>(o.nx) * o.ny;
  part.plane_start.assign(size + 1, 0);
  for (int k = 0; k < size; ++k) part.plane_start[k + 1] = part.plane_start[k] + o.planes[k];
  part.z0 = part.plane_start[rank];
  part.nzl = o.planes[rank];
  part.first = part.z0 * part.plane;
  part.nloc = part.nzl * part.plane;
  return part;
}

// The process that owns global row `row`.
int owner(const Part& part, long row) {
  const int z = static_cast<int>(row / part.plane);
  return static_cast<int>(std::upper_bound(part.plane_start.begin(), part.plane_start.end(), z) -
                          part.plane_start.begin()) -
         1;
}

// The points of {c - 1, c, c + 1} inside [0, n).
int span(int c, int n) {
  return 1 + (c > 0) + (c + 1 < n);
}

// Calls f(global column, value) for the row's entries, in increasing column order.
template <class F>
void for_each_entry(const Options& o, long row, F f) {
  const int x = row % o.nx, y = (row / o.nx) % o.ny, z = row / (static_cast<long>(o.nx) * o.ny);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int cx = x + dx, cy = y + dy, cz = z + dz;
        if (cx < 0 || cx >= o.nx || cy < 0 || cy >= o.ny || cz < 0 || cz >= o.nz) continue;
        f((static_cast<long>(cz) * o.ny + cy) * o.nx + cx,
          (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0);
      }
}

// The global rows outside [first, first + nloc) that the owned rows reference, sorted.
std::vector<long> find_externals(const Options& o, const Part& part) {
  std::vector<long> ext;
  for (long i = 0; i < part.nloc; ++i)
    for_each_entry(o, part.first + i, [&](long c, double) {
      if (c < part.first || c >= part.first + part.nloc) ext.push_back(c);
    });
  std::sort(ext.begin(), ext.end());
  ext.erase(std::unique(ext.begin(), ext.end()), ext.end());
  return ext;
}

// The local matrix: each row's columns in the global order, numbered into [owned | externals].
Csr build_matrix(const Options& o, const Part& part) {
  Csr a;
  a.externals = find_externals(o, part);
  a.row_ptr.assign(part.nloc + 1, 0);
  for (long i = 0; i < part.nloc; ++i) {
    const long row = part.first + i;
    const int x = row % o.nx, y = (row / o.nx) % o.ny, z = row / part.plane;
    a.row_ptr[i + 1] = a.row_ptr[i] + span(x, o.nx) * span(y, o.ny) * span(z, o.nz);
  }
  a.col.resize(a.row_ptr[part.nloc]);
  a.val.resize(a.row_ptr[part.nloc]);
  const auto& ext = a.externals;
#pragma omp parallel for
  for (long i = 0; i < part.nloc; ++i) {
    int e = a.row_ptr[i];
    for_each_entry(o, part.first + i, [&](long c, double v) {
      const bool mine = c >= part.first && c < part.first + part.nloc;
      a.col[e] = static_cast<int>(
          mine ? c - part.first
               : part.nloc + (std::lower_bound(ext.begin(), ext.end(), c) - ext.begin()));
      a.val[e++] = v;
    });
  }
  return a;
}

// b = A * ones, from the definition: 26 minus the number of neighbours.
std::vector<double> build_rhs(const Options& o, const Part& part) {
  std::vector<double> b(part.nloc);
#pragma omp parallel for
  for (long i = 0; i < part.nloc; ++i) {
    const long row = part.first + i;
    const int x = row % o.nx, y = (row / o.nx) % o.ny, z = row / part.plane;
    b[i] = 27.0 - span(x, o.nx) * span(y, o.ny) * span(z, o.nz);
  }
  return b;
}

// The externals grouped by owner (recv_*): ext is sorted and the owners' rows are in rank order.
void plan_receives(const Part& part, const std::vector<long>& ext, Exchange& ex) {
  for (std::size_t k = 0; k < ext.size(); ++k) {
    const int from = owner(part, ext[k]);
    if (ex.recv_rank.empty() || ex.recv_rank.back() != from) {
      ex.recv_rank.push_back(from);
      ex.recv_offset.push_back(static_cast<int>(k));
      ex.recv_count.push_back(0);
    }
    ++ex.recv_count.back();
  }
}

// Every owner learns which of its rows each process needs (send_*), as local rows.
void plan_sends(const Part& part, const std::vector<long>& ext, Exchange& ex) {
  std::vector<int> want(part.size, 0), asked(part.size, 0);
  for (std::size_t k = 0; k < ex.recv_rank.size(); ++k) want[ex.recv_rank[k]] = ex.recv_count[k];
  MPI_Alltoall(want.data(), 1, MPI_INT, asked.data(), 1, MPI_INT, MPI_COMM_WORLD);
  ex.send_ptr.assign(1, 0);
  for (int r = 0; r < part.size; ++r)
    if (asked[r] > 0) {
      ex.send_rank.push_back(r);
      ex.send_ptr.push_back(ex.send_ptr.back() + asked[r]);
    }
  std::vector<int> wanted(ext.begin(), ext.end());  // global rows < 2^31 (checked by parse)
  ex.send_rows.resize(ex.send_ptr.back());
  std::vector<MPI_Request> req;
  for (std::size_t k = 0; k < ex.send_rank.size(); ++k) {
    req.emplace_back();
    MPI_Irecv(&ex.send_rows[ex.send_ptr[k]], ex.send_ptr[k + 1] - ex.send_ptr[k], MPI_INT,
              ex.send_rank[k], 0, MPI_COMM_WORLD, &req.back());
  }
  for (std::size_t k = 0; k < ex.recv_rank.size(); ++k) {
    req.emplace_back();
    MPI_Isend(&wanted[ex.recv_offset[k]], ex.recv_count[k], MPI_INT, ex.recv_rank[k], 0,
              MPI_COMM_WORLD, &req.back());
  }
  MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
  for (int& row : ex.send_rows) row -= static_cast<int>(part.first);
}

Exchange plan_exchange(const Part& part, const std::vector<long>& ext) {
  Exchange ex;
  plan_receives(part, ext, ex);
  plan_sends(part, ext, ex);
  ex.send_buf.resize(ex.send_rows.size());
  ex.requests.resize(ex.recv_rank.size() + ex.send_rank.size());
  return ex;
}

// v[nloc + ...] = the owners' entries of v (v holds nloc owned entries, then the externals).
void exchange_externals(Exchange& ex, std::vector<double>& v, long nloc) {
  const std::size_t nrecv = ex.recv_rank.size();
  for (std::size_t k = 0; k < nrecv; ++k)
    MPI_Irecv(&v[nloc + ex.recv_offset[k]], ex.recv_count[k], MPI_DOUBLE, ex.recv_rank[k], 1,
              MPI_COMM_WORLD, &ex.requests[k]);
  const long nsend = static_cast<long>(ex.send_rows.size());
#pragma omp parallel for
  for (long k = 0; k < nsend; ++k) ex.send_buf[k] = v[ex.send_rows[k]];
  for (std::size_t k = 0; k < ex.send_rank.size(); ++k)
    MPI_Isend(&ex.send_buf[ex.send_ptr[k]], ex.send_ptr[k + 1] - ex.send_ptr[k], MPI_DOUBLE,
              ex.send_rank[k], 1, MPI_COMM_WORLD, &ex.requests[nrecv + k]);
  MPI_Waitall(static_cast<int>(ex.requests.size()), ex.requests.data(), MPI_STATUSES_IGNORE);
}

// y = A x on the owned rows; x's externals are exchanged first.
void spmv(const Csr& a, Exchange& ex, std::vector<double>& x, std::vector<double>& y) {
  const long nloc = static_cast<long>(y.size());
  exchange_externals(ex, x, nloc);
#pragma omp parallel for
  for (long i = 0; i < nloc; ++i) {
    double s = 0.0;
    for (int e = a.row_ptr[i]; e < a.row_ptr[i + 1]; ++e) s += a.val[e] * x[a.col[e]];
    y[i] = s;
  }
}

// a . b over the whole grid: one partial sum per z-plane, added in plane order on every process.
double dot(const Part& part, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> part_sums(part.plane_start.back(), 0.0);
#pragma omp parallel for
  for (int z = 0; z < part.nzl; ++z) {
    double s = 0.0;
    for (long i = z * part.plane; i < (z + 1) * part.plane; ++i) s += a[i] * b[i];
    part_sums[part.z0 + z] = s;
  }
  MPI_Allreduce(MPI_IN_PLACE, part_sums.data(), static_cast<int>(part_sums.size()), MPI_DOUBLE,
                MPI_SUM, MPI_COMM_WORLD);
  double s = 0.0;
  for (double v : part_sums) s += v;
  return s;
}

// The smallest eigenvalue of A: 27 - prod over the axes of (1 + 2 cos(pi / (n + 1))).
double lambda_min(const Options& o) {
  const double pi = 3.14159265358979323846;
  double t = 1.0;
  for (int n : {o.nx, o.ny, o.nz}) t *= 1.0 + 2.0 * std::cos(pi / (n + 1));
  return 27.0 - t;
}

struct Residuals {
  double first, last;  // ||r|| before the first iteration and after the last
};

// Unpreconditioned CG from x = 0; rank 0 prints ||r|| after every iteration.
Residuals cg(const Csr& a, Exchange& ex, const Part& part, const std::vector<double>& b,
             std::vector<double>& x, const Options& o) {
  const long nloc = part.nloc;
  std::vector<double> r = b, p(x.size(), 0.0), q(nloc);
  std::copy(b.begin(), b.end(), p.begin());
  double rr = dot(part, r, r);
  const double r0 = std::sqrt(rr);
  if (part.rank == 0) std::printf("iter %4d residual %.17e\n", 0, r0);
  for (int k = 1; k <= o.iters; ++k) {
    spmv(a, ex, p, q);
    const double alpha = rr / dot(part, p, q);
#pragma omp parallel for
    for (long i = 0; i < nloc; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_new = dot(part, r, r), beta = rr_new / rr;
    rr = rr_new;
    if (part.rank == 0) std::printf("iter %4d residual %.17e\n", k, std::sqrt(rr));
    if (std::sqrt(rr) <= o.tol * r0) break;
#pragma omp parallel for
    for (long i = 0; i < nloc; ++i) p[i] = r[i] + beta * p[i];
  }
  return {r0, std::sqrt(rr)};
}

// spcg_openmp.cpp's checks against the exact solution x = 1; rank 0 prints the figures.
bool verify(const Csr& a, Exchange& ex, const Part& part, const std::vector<double>& b,
            std::vector<double>& x, Residuals res, const Options& o) {
  std::vector<double> d(part.nloc);
  spmv(a, ex, x, d);
  double err = 0.0;
#pragma omp parallel for reduction(max : err)
  for (long i = 0; i < part.nloc; ++i) {
    err = std::max(err, std::fabs(x[i] - 1.0));
    d[i] = b[i] - d[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double true_res = std::sqrt(dot(part, d, d));
  const double bound = true_res / lambda_min(o) * (1.0 + 1e-6) + 1e-12;
  if (part.rank == 0) {
    std::printf("relative residual %.6e, true residual ||b-Ax||_2 %.6e\n", res.last / res.first,
                true_res);
    std::printf("error ||x-1||_inf %.6e (bound ||b-Ax||_2/lambda_min %.6e)\n", err, bound);
  }
  return err <= bound && std::fabs(true_res - res.last) <= 1e-8 * res.first &&
         (o.tol == 0.0 || res.last <= o.tol * res.first);
}

// The time since t0 on the slowest process.
double slowest_since(double t0) {
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

void print_header(const Options& o, const Part& part, const Csr& a) {
  std::vector<int> counts(part.size);
  const int mine = static_cast<int>(a.externals.size());
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (part.rank != 0) return;
  std::string planes, externals;
  for (int k = 0; k < part.size; ++k) {
    planes += std::to_string(o.planes[k]) + (k + 1 < part.size ? "," : "");
    externals += std::to_string(counts[k]) + (k + 1 < part.size ? "," : "");
  }
  std::printf(
      "spcg_mpi: grid %d x %d x %d (%ld rows), iters %d, tol %g, processes %d, threads %d\n", o.nx,
      o.ny, o.nz, part.plane * o.nz, o.iters, o.tol, part.size, omp_get_max_threads());
  std::printf("planes per process %s, externals per process %s\n", planes.c_str(),
              externals.c_str());
}

int run(const Options& o, int rank, int size) {
  const Part part = make_part(o, rank, size);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  const Csr a = build_matrix(o, part);
  Exchange ex = plan_exchange(part, a.externals);
  const std::vector<double> b = build_rhs(o, part);
  std::vector<double> x(part.nloc + a.externals.size(), 0.0);
  const double setup = slowest_since(t0);
  print_header(o, part, a);

  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  const Residuals res = cg(a, ex, part, b, x, o);
  const double solve = slowest_since(t0);

  const bool ok = verify(a, ex, part, b, x, res, o);
  if (rank == 0) {
    std::printf("time setup %.6f s, solve %.6f s\n", setup, solve);
    std::printf("Verification: %s\n", ok ? "PASSED" : "FAILED");
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_FUNNELED) {
    if (rank == 0) std::fprintf(stderr, "spcg_mpi: MPI gives no MPI_THREAD_FUNNELED\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int status = 2;
  try {
    status = run(parse(argc, argv, size), rank, size);  // every process parses the same argv
  } catch (const BadInput& bad) {
    if (rank == 0) std::fprintf(stderr, "spcg_mpi: %s\n", bad.message.c_str());
  }
  MPI_Finalize();
  return status;
}
