#include "orrery/host/metrics_bus.h"

#include <algorithm>

namespace orrery {

int MetricsBus::subscribe(Sink sink) {
  sinks_.emplace_back(next_id_, std::move(sink));
  return next_id_++;
}

void MetricsBus::unsubscribe(int id) {
  sinks_.erase(std::remove_if(sinks_.begin(), sinks_.end(),
                              [id](const auto& s) { return s.first == id; }),
               sinks_.end());
}

void MetricsBus::publish(const Json& event) {
  for (auto& [id, sink] : sinks_) sink(event);
}

}  // namespace orrery
