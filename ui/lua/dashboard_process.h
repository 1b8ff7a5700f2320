#pragma once
// `orrery ui` as a child process, for a session that must stay free while the window is open
// (the REPL's orrery.ui). It runs in its own process group, so Ctrl-C in the terminal stops the
// session's work, not the window.
#include <string>
#include <vector>

namespace orrery::ui {

// Starts `orrery ui ARGS...` (the orrery program: this process when it is one, else the one
// beside the core library). With `wait`, returns 0 once it exited successfully and throws when
// it failed; otherwise returns its process id at once and reaps it when it closes.
long start_dashboard_process(const std::vector<std::string>& args, bool wait);

}  // namespace orrery::ui
