#pragma once
// Every file Orrery writes for keeps (JSON, weights, forecasts) goes through here: the bytes go
// to a temporary file beside the target, are synced to disk, then a rename replaces the target
// in one step and the folder is synced, so a crash, a power cut or a full disk never leaves
// half a file and never damages what was there before.
#include <functional>
#include <ostream>
#include <string>

namespace orrery {
// Calls `write` on a binary stream; throws orrery::Error naming the path when anything fails.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
// fsync(2) of a file or a folder (a folder: its entries, e.g. after a rename); throws naming it.
void sync_path(const std::string& path);
}  // namespace orrery
