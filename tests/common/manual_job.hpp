// A job whose ranks a test starts itself, with the variables a launcher would set (ManualJob).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "process.hpp"

namespace compas::testing {

// A job whose ranks the test starts itself. Rank 0 is handed a listening socket (as compas-run
// does) unless `own_port`, in which case it binds the port itself.
class ManualJob {
 public:
  ManualJob(std::string program, int size, Env extra = {}, bool own_port = false);
  ~ManualJob();
  int port() const { return port_; }
  std::string rendezvous() const { return "127.0.0.1:" + std::to_string(port_); }

  std::unique_ptr<Proc> start(int rank, const std::vector<std::string>& args = {},
                              const Env& more = {});

  std::string token = "0123456789abcdef0123456789abcdef";

 private:
  std::string program_;
  int size_;
  Env extra_;
  int listen_fd_ = -1;
  int port_ = 0;
};

}  // namespace compas::testing
