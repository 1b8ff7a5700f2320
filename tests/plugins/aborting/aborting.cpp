// A library that calls abort() from a static initialiser, while dlopen loads it. The process
// cannot survive; the host must still say which plugin file it was loading.
#include <cstdlib>

namespace {
struct Aborts {
  Aborts() { std::abort(); }
};
const Aborts aborts;
}  // namespace
