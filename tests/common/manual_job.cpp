// ManualJob (manual_job.hpp).
#include "manual_job.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace compas::testing {

ManualJob::ManualJob(std::string program, int size, Env extra, bool own_port)
    : program_(std::move(program)), size_(size), extra_(std::move(extra)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(listen_fd_, 512) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    ADD_FAILURE() << "cannot listen on 127.0.0.1";
  port_ = ntohs(sa.sin_port);
  if (own_port) {  // free the port for rank 0 to bind (racy in general, fine in a test)
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

ManualJob::~ManualJob() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::unique_ptr<Proc> ManualJob::start(int rank, const std::vector<std::string>& args,
                                       const Env& more) {
  Env env = {{"COMPAS_RANK", std::to_string(rank)},
             {"COMPAS_SIZE", std::to_string(size_)},
             {"COMPAS_RENDEZVOUS", rendezvous()},
             {"COMPAS_JOB_TOKEN", token}};
  env.insert(env.end(), extra_.begin(), extra_.end());
  env.insert(env.end(), more.begin(), more.end());
  std::vector<std::string> argv = {program_};
  argv.insert(argv.end(), args.begin(), args.end());
  if (rank == 0 && listen_fd_ >= 0) {
    env.push_back({"COMPAS_RENDEZVOUS_FD", "100"});
    return std::make_unique<Proc>(argv, env, listen_fd_, 100);
  }
  return std::make_unique<Proc>(argv, env);
}

}  // namespace compas::testing
