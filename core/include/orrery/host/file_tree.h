#pragma once
// Removing a folder tree without std::filesystem::remove_all or recursive_directory_iterator.
//
// The pip LibTorch wheels export a statically linked copy of libstdc++'s recursive directory
// iteration (pytorch/pytorch#133437). In a program that loads them and was built with a newer
// GCC than the wheel's, remove_all and recursive_directory_iterator bind to that copy, whose
// layout differs, and crash: seen with GCC 13 and torch 2.11 (Ubuntu 24.04), a segfault at the
// first checkpoint a run pruned. directory_iterator and remove, used here, are safe: loading the
// plugins uses them too. tests/test_files.cpp refuses the two names anywhere in the sources.
#include <cstdint>
#include <filesystem>
#include <system_error>

namespace orrery {

// Removes `path` and everything under it, depth first, never following a symbolic link (a link
// is removed, not what it points to). A path that does not exist is no error. Returns the number
// of entries removed; on a failure sets `ec` and stops there, as remove_all does.
inline std::uintmax_t remove_tree(const std::filesystem::path& path, std::error_code& ec) {
  namespace fs = std::filesystem;
  const fs::file_status s = fs::symlink_status(path, ec);
  if (s.type() == fs::file_type::not_found) {
    ec.clear();
    return 0;
  }
  if (ec) return 0;
  std::uintmax_t removed = 0;
  if (s.type() == fs::file_type::directory) {
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      removed += remove_tree(it->path(), ec);
      if (ec) return removed;
    }
    if (ec) return removed;
  }
  if (fs::remove(path, ec)) ++removed;
  return removed;
}

// The same, throwing std::filesystem::filesystem_error on a failure.
inline std::uintmax_t remove_tree(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t removed = remove_tree(path, ec);
  if (ec) throw std::filesystem::filesystem_error("cannot remove", path, ec);
  return removed;
}

}  // namespace orrery
