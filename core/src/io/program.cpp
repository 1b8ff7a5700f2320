#include "orrery/host/program.h"

#include <dlfcn.h>

#include <filesystem>

#include "orrery/error.h"

namespace orrery {

std::string orrery_program() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "orrery") return self.string();
  Dl_info info;
  std::filesystem::path beside;
  if (dladdr(reinterpret_cast<void*>(&orrery_program), &info) && info.dli_fname) {
    beside = std::filesystem::path(info.dli_fname).parent_path().parent_path() / "bin" / "orrery";
    if (std::filesystem::exists(beside)) return std::filesystem::absolute(beside).string();
  }
  throw Error("cannot find the orrery program (tried /proc/self/exe and " + beside.string() + ")");
}

std::string installed_data(const std::string& relative) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&installed_data), &info) || !info.dli_fname) return "";
  const std::filesystem::path path =
      (std::filesystem::path(info.dli_fname).parent_path().parent_path() / "share" / "orrery" / relative).lexically_normal();
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? std::filesystem::absolute(path, ec).string() : "";
}

}  // namespace orrery
