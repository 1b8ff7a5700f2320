#include "orrery/csv_tokenizer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "orrery/error.h"
#include "orrery/input_file.h"

namespace orrery {

CsvTokenizer::CsvTokenizer(std::string path, size_t chunk_bytes) : path_(std::move(path)), chunk_(chunk_bytes) {
  require_input_file(path_, "a CSV file");
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error("cannot open " + path_ + ": " + std::strerror(errno));
}

CsvTokenizer::~CsvTokenizer() {
  if (fd_ >= 0) ::close(fd_);
}

bool CsvTokenizer::fill() {
  if (eof_) return false;
  ssize_t n;
  do n = ::read(fd_, chunk_.data(), chunk_.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) throw Error("cannot read " + path_ + ": " + std::strerror(errno));
  pos_ = 0;
  size_ = static_cast<size_t>(n);
  eof_ = n == 0;
  return n > 0;
}

bool CsvTokenizer::next(std::vector<std::string>& fields, int64_t& line) {
  size_t count = 0;  // fields of this row so far; `fields` keeps its strings' memory between rows
  auto field = [&]() -> std::string& {
    if (count == fields.size()) fields.emplace_back();
    return fields[count];
  };
  field().clear();
  bool quoted = false, after_quote = false, any = false;
  line = line_;
  for (;;) {
    if (pos_ == size_ && !fill()) {
      if (quoted) throw Error(path_ + ":" + std::to_string(line) + ": a quoted field is not closed by the end of the file");
      if (!any) return false;
      break;
    }
    const char c = chunk_[pos_++];
    if (bom_ < 3) {  // a UTF-8 byte-order mark opening the file is not part of the first name
      static constexpr char kBom[] = "\xEF\xBB\xBF";
      if (c == kBom[bom_]) {
        ++bom_;
        continue;
      }
      field().append(kBom, bom_);  // a partial mark: ordinary bytes after all
      bom_ = 3;
    }
    if (c == '\0') throw Error(path_ + ":" + std::to_string(line_) + ": holds binary data (a NUL byte): not a text CSV file");
    if (quoted) {
      if (c == '"') quoted = false, after_quote = true;
      else {
        if (c == '\n') ++line_;
        field() += c;
      }
      continue;
    }
    if (c == '"' && after_quote) {  // "" inside quotes: one quote
      field() += '"';
      quoted = true, after_quote = false;
      continue;
    }
    after_quote = false;
    if (c == ',') {
      ++count;
      field().clear();
      any = true;
    } else if (c == '\n') {
      ++line_;
      if (any) break;
      field().clear();  // a blank line: the row starts on the next one
      line = line_;
    } else if (c == '"' && field().find_first_not_of(" \t") == std::string::npos) {
      field().clear();
      quoted = any = true;
    } else if (c != '\r') {
      field() += c;
      if (c != ' ' && c != '\t') any = true;
    }
  }
  fields.resize(count + 1);
  return true;
}

}  // namespace orrery
