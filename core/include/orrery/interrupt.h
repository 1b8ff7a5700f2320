#pragma once
// A request to stop a long call: Ctrl-C, SIGTERM (what Slurm and `kill` send), or a dashboard
// window closing. Whoever can ask holds it beside whoever does the work; training polls it
// every step, forecasts between blocks and batches of series. It is not process-wide: each
// Lua session owns one, and only the signal handler needs to know which session is running.
#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>

#include "orrery/error.h"

namespace orrery {

class Interrupt {
 public:
  // Async-signal-safe: lock-free stores and clock_gettime, nothing else.
  void request(int signal = SIGINT) noexcept {
    int none = 0;
    if (signal_.compare_exchange_strong(none, signal ? signal : SIGINT)) since_ns_.store(now_ns());
  }
  // Seconds since the first request still standing (async-signal-safe); 0 when none.
  double seconds_since_request() const noexcept {
    return requested() ? static_cast<double>(now_ns() - since_ns_.load()) * 1e-9 : 0;
  }
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
  static int64_t now_ns() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  }
  std::atomic<int> signal_{0};
  std::atomic<int64_t> since_ns_{0};
  static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
};

// Checks `interrupt` when there is one.
inline void check_interrupt(const Interrupt* interrupt) {
  if (interrupt) interrupt->check();
}

}  // namespace orrery
