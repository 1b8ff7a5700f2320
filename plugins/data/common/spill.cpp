#include "spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "orrery/error.h"

namespace orrery::data {

SpillLog::SpillLog(std::string dir, size_t memory_budget) : dir_(std::move(dir)), budget_(memory_budget) {}

SpillLog::~SpillLog() {
  if (fd_ >= 0) ::close(fd_);
}

size_t SpillLog::add_stream() {
  streams_.emplace_back();
  return streams_.size() - 1;
}

void SpillLog::append(size_t stream, const void* bytes, size_t size) {
  auto& tail = streams_[stream].tail;
  const char* p = static_cast<const char*>(bytes);
  tail.insert(tail.end(), p, p + size);
  buffered_ += size;
  if (buffered_ > budget_) spill();
}

void SpillLog::spill() {
  if (fd_ < 0) {
    std::string name = dir_ + "/.orrery-spill-XXXXXX";
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) throw Error("cannot create a temporary file in " + dir_ + ": " + std::strerror(errno));
    ::unlink(name.c_str());  // lives as long as the descriptor: nothing to clean up after a crash
  }
  for (auto& s : streams_) {
    if (s.tail.empty()) continue;
    size_t done = 0;
    while (done < s.tail.size()) {
      const ssize_t n = ::pwrite(fd_, s.tail.data() + done, s.tail.size() - done, static_cast<off_t>(end_ + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error("cannot write a temporary file in " + dir_ + " (disk full?): " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    s.extents.emplace_back(end_, s.tail.size());
    end_ += s.tail.size();
    std::vector<char>().swap(s.tail);  // give the memory back, not just the size
  }
  buffered_ = 0;
}

std::vector<char> SpillLog::take(size_t stream) {
  Stream& s = streams_[stream];
  size_t total = s.tail.size();
  for (const auto& e : s.extents) total += e.second;
  std::vector<char> out(total);
  size_t at = 0;
  for (const auto& [offset, size] : s.extents) {
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::pread(fd_, out.data() + at + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error("cannot read back a temporary file in " + dir_ + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
    at += size;
  }
  if (!s.tail.empty()) std::memcpy(out.data() + at, s.tail.data(), s.tail.size());
  buffered_ -= s.tail.size();
  std::vector<char>().swap(s.tail);
  s.extents.clear();
  return out;
}

}  // namespace orrery::data
