#pragma once
// A read-only memory map of a whole file: samplers read cached series straight from the page
// cache, so a dataset larger than memory costs only the pages its windows touch, and threads
// share it without locks.
#include <cstddef>
#include <string>

namespace orrery::data {

class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);  // throws orrery::Error naming the path
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const float* floats() const { return static_cast<const float*>(data_); }
  size_t size() const { return size_; }  // bytes

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace orrery::data
