#pragma once
// A request to stop a long call: Ctrl-C, SIGTERM (what Slurm and `kill` send), or a dashboard
// window closing. Whoever can ask holds it beside whoever does the work; training polls it
// every step, forecasts between blocks and batches of series. It is not process-wide: each
// Lua session owns one, and only the signal handler needs to know which session is running.
#include <atomic>
#include <csignal>

#include "orrery/error.h"

namespace orrery {

class Interrupt {
 public:
  // Async-signal-safe: a lock-free store, nothing else.
  void request(int signal = SIGINT) noexcept { signal_.store(signal ? signal : SIGINT); }
  bool requested() const noexcept { return signal_.load() != 0; }
  // The signal that asked (SIGINT for a window closing); 0 when none has.
  int signal() const noexcept { return signal_.load(); }
  void clear() noexcept { signal_.store(0); }
  // Throws orrery::Interrupted when a stop was requested; the request stays, so every caller
  // up the stack sees it too.
  void check() const {
    if (requested()) throw Interrupted();
  }

 private:
  std::atomic<int> signal_{0};
  static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
};

// Checks `interrupt` when there is one.
inline void check_interrupt(const Interrupt* interrupt) {
  if (interrupt) interrupt->check();
}

}  // namespace orrery
