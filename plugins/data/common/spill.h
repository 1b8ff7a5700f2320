#pragma once
// Bytes appended to many streams at once (one per series, one per time axis) while a file is
// read in one pass, then taken back stream by stream. Long-layout files interleave their ids in
// any order, so a series' rows arrive scattered through the file: the log keeps each stream's
// tail in memory and, whenever all tails together pass the budget, appends them to one
// temporary file as extents of their stream. Memory stays bounded by the budget however many
// series there are, and only one file handle is open (not one per id). The temporary file is
// unlinked as soon as it is created, so nothing is left behind by a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace orrery::data {

class SpillLog {
 public:
  // `dir`: where the temporary file goes (the cache folder: it is known to be writable).
  SpillLog(std::string dir, size_t memory_budget);
  ~SpillLog();
  SpillLog(const SpillLog&) = delete;
  SpillLog& operator=(const SpillLog&) = delete;

  size_t add_stream();
  void append(size_t stream, const void* bytes, size_t size);
  // Every byte appended to `stream`, in order; the stream's memory is released.
  std::vector<char> take(size_t stream);
  uint64_t spilled_bytes() const { return end_; }

 private:
  struct Stream {
    std::vector<char> tail;
    std::vector<std::pair<uint64_t, uint64_t>> extents;  // (offset, size) in the file
  };
  void spill();

  std::string dir_;
  size_t budget_, buffered_ = 0;
  int fd_ = -1;
  uint64_t end_ = 0;
  std::vector<Stream> streams_;
};

}  // namespace orrery::data
