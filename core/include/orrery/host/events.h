#pragma once
// The kinds of event a run publishes on its metrics bus and writes, one JSON object per line,
// to metrics.jsonl (forecast snapshots to forecasts.jsonl). Producers and readers (the run
// store, Lua callbacks, the dashboard) agree on them by type, not by comparing strings.
#include <optional>
#include <string>

#include "orrery/json.h"

namespace orrery {

// skip: a step with a non-finite loss or gradient, not applied; spike: a loss far above the
// running median; checkpoint: a checkpoint of the step was written; resume: the run continued
// from a checkpoint (metrics.jsonl was cut back to that checkpoint first); sample: text a model
// of token ids drew after a validation.
enum class EventKind { train, val, forecast, sample, skip, spike, checkpoint, resume, end };

inline const char* event_name(EventKind k) {
  switch (k) {
    case EventKind::train: return "train";
    case EventKind::val: return "val";
    case EventKind::forecast: return "forecast";
    case EventKind::sample: return "sample";
    case EventKind::skip: return "skip";
    case EventKind::spike: return "spike";
    case EventKind::checkpoint: return "checkpoint";
    case EventKind::resume: return "resume";
    case EventKind::end: return "end";
  }
  return "?";
}

// The kind of an event object (its "event" field); nullopt for anything else.
inline std::optional<EventKind> event_kind(const Json& event) {
  if (!event.is_object()) return std::nullopt;
  const auto it = event.find("event");
  if (it == event.end() || !it->is_string()) return std::nullopt;
  for (EventKind k : {EventKind::train, EventKind::val, EventKind::forecast, EventKind::sample, EventKind::skip, EventKind::spike,
                      EventKind::checkpoint, EventKind::resume, EventKind::end})
    if (it->get_ref<const std::string&>() == event_name(k)) return k;
  return std::nullopt;
}

// An event of kind `k` carrying `fields`.
inline Json make_event(EventKind k, const Json& fields = Json::object()) {
  Json e = {{"event", event_name(k)}};
  e.update(fields);
  return e;
}

}  // namespace orrery
