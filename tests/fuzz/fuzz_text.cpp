// The text plugin's tokenizer on any bytes. An input starting with '{' is a tokenizer file: it
// either loads or is refused with an orrery::Error naming the file, and one that loads saves
// and loads again to the same merges and special tokens. Any other input is text: its chunks
// concatenate to it exactly, and a tokenizer trained on it (a few merges, as many as its pairs
// allow) encodes it to ids that decode back to its bytes, none of them special.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "bpe.h"
#include "fuzz_support.h"
#include "orrery/error.h"
#include "pretokenize.h"

namespace {
using orrery::text::Bpe;

void check(bool ok) {
  if (!ok) std::abort();
}

void tokenizer_file(const uint8_t* data, size_t size) {
  const std::string path = orrery::fuzz::write_input(data, size, "tokenizer.json");
  try {
    const Bpe bpe = Bpe::load(path);
    bpe.save(orrery::fuzz::scratch_dir() + "/again.json");
    const Bpe again = Bpe::load(orrery::fuzz::scratch_dir() + "/again.json");
    check(again.merges() == bpe.merges() && again.special_tokens() == bpe.special_tokens());
  } catch (const orrery::Error& e) {
    orrery::fuzz::refused(e);
  }
}

void text(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  std::string joined;
  for (const auto chunk : orrery::text::split_chunks(s)) {
    check(!chunk.empty());
    joined += chunk;
  }
  check(joined == s);
  for (int merges = 8; merges >= 0; --merges) {  // as many as the text's pairs allow
    try {
      const Bpe bpe = Bpe::train({s}, 256 + merges + 1, {"<|bos|>"});
      const auto ids = bpe.encode(s);
      check(bpe.decode(ids) == s);
      for (const int32_t id : ids) check(!bpe.is_special(id));
      return;
    } catch (const orrery::Error& e) {
      orrery::fuzz::refused(e);
    }
  }
  std::abort();  // no merges at all cannot run out of pairs
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0 && data[0] == '{') tokenizer_file(data, size);
  else text(data, size);
  return 0;
}
