#pragma once
// The single way results leave a run: events (JSON objects with an "event" field) are
// published here and fanned out to the run store, the console and Lua callbacks.
#include <functional>
#include <vector>

#include "orrery/json.h"

namespace orrery {

class MetricsBus {
 public:
  using Sink = std::function<void(const Json&)>;
  int subscribe(Sink sink);
  void unsubscribe(int id);
  void publish(const Json& event);
 private:
  std::vector<std::pair<int, Sink>> sinks_;
  int next_id_ = 0;
};

}  // namespace orrery
