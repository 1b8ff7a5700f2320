// A library whose static initialiser throws. It runs inside dlopen, where nothing can catch
// it: std::terminate aborts the process. The host can only say which file it was loading.
#include <stdexcept>

namespace {
struct Throws {
  Throws() { throw std::runtime_error("static_throw: a static initialiser failed"); }
};
const Throws throws;
}  // namespace
