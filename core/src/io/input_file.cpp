#include "orrery/input_file.h"

#include <sys/stat.h>

#include "orrery/error.h"

namespace orrery {

void require_input_file(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // the caller's open says why
  if (S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode)) throw Error(path + " is a folder, not " + kind);
  const char* what = S_ISFIFO(st.st_mode) ? "a named pipe"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                   : "not a regular file";
  throw Error(path + " is " + what + ", not " + kind + ": Orrery reads regular files only, since a pipe or " +
              "device could block or never end");
}

}  // namespace orrery
