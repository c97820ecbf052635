#pragma once
// An error that every rank of the job raised at the same point, after agreeing on it through a
// collective that all ranks reach (comm/failure_agreement.hpp). main() prints it once (rank 0)
// and every rank returns `status` normally: no MPI_Abort, no second diagnosis. Any other error
// that escapes on one rank is that rank's alone and ends the whole job with MPI_Abort.
#include <stdexcept>
#include <string>

namespace wt {

class AgreedError : public std::runtime_error {
 public:
  // line: the whole message as it is printed, e.g. "wavetrain: error: deck.toml:3: train.x: ...".
  AgreedError(int status, const std::string& line) : std::runtime_error(line), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

}  // namespace wt
