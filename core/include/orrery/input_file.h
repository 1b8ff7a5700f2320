#pragma once
// What Orrery reads as input (data, scripts, weights) must be a regular file: a folder is
// refused by name, and a named pipe, device or socket would block open(2) with no writer, or be
// read forever, where the user meant a file.
#include <string>

namespace orrery {
// Throws orrery::Error "PATH is a folder, not KIND" or "PATH is a named pipe, not KIND: ..."
// (`kind`: "a CSV file"). A path that does not exist is left to the caller's open, which names
// the reason.
void require_input_file(const std::string& path, const std::string& kind);
}  // namespace orrery
