#pragma once
// CSV rows from a file read in fixed-size chunks: memory stays at one chunk and one row
// whatever the file's size. The tokenizer is a byte-at-a-time state machine whose state
// (inside quotes, after a quote, the field so far) lives across chunk ends, so a row, a field
// or a doubled quote cut by a chunk boundary reads the same as a whole one. RFC 4180 quoting:
// quoted fields may hold commas, doubled quotes and line breaks; CRLF and LF both end rows;
// blank lines are skipped; a UTF-8 byte-order mark at the start is dropped.
#include <cstdint>
#include <string>
#include <vector>

namespace orrery {

class CsvTokenizer {
 public:
  CsvTokenizer(std::string path, size_t chunk_bytes);
  ~CsvTokenizer();
  CsvTokenizer(const CsvTokenizer&) = delete;
  CsvTokenizer& operator=(const CsvTokenizer&) = delete;

  // The next row's fields (quotes removed) and the line it starts on; false at the end.
  bool next(std::vector<std::string>& fields, int64_t& line);
  const std::string& path() const { return path_; }

 private:
  bool fill();  // the next chunk; false at the end of the file

  std::string path_;
  int fd_ = -1;
  std::vector<char> chunk_;
  size_t pos_ = 0, size_ = 0;
  int64_t line_ = 1;
  int bom_ = 0;  // bytes of a byte-order mark matched at the start
  bool eof_ = false;
};

}  // namespace orrery
