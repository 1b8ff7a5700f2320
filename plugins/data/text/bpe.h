#pragma once
// A byte-level byte-pair-encoding tokenizer, trained the way nanochat's rustbpe trains one: text
// is cut into chunks (pretokenize.h), each chunk starts as its bytes (ids 0-255), and the most
// frequent adjacent pair over the corpus is merged into a new id, again and again, until the
// vocabulary is full. Special tokens (<|bos|> first) take the last ids and never come out of
// encoding ordinary text. Any bytes round-trip, valid UTF-8 or not.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "orrery/interrupt.h"
#include "orrery/json.h"

namespace orrery::text {

class Bpe {
 public:
  // Trains on `texts` to `vocab_size` ids: 256 bytes, vocab_size - 256 - specials merges, then
  // `special_tokens`. The most frequent pair wins, ties to the smallest pair of ids, so the
  // merges depend on the texts only. `progress(merges done, merges wanted)` is called now and
  // then. Fewer merges than asked are an error (the texts run out of pairs). A large corpus
  // takes minutes: `interrupt` (may be null) is checked before each merge.
  static Bpe train(const std::vector<std::string_view>& texts, int64_t vocab_size,
                   std::vector<std::string> special_tokens,
                   const std::function<void(int64_t, int64_t)>& progress = {}, const Interrupt* interrupt = nullptr);
  // A tokenizer as save() wrote it; an error names the file and what is wrong in it.
  static Bpe load(const std::string& path);
  static Bpe from_json(const Json& j, const std::string& where);
  void save(const std::string& path) const;  // written whole or not at all
  Json to_json() const;

  std::vector<int32_t> encode(std::string_view text) const;  // ordinary text, no special tokens
  // Each text encoded, sharing the work of the chunks they have in common (a corpus); `interrupt`
  // (may be null) is checked before each new chunk.
  std::vector<std::vector<int32_t>> encode_all(std::span<const std::string_view> texts,
                                               const Interrupt* interrupt = nullptr) const;
  std::string decode(std::span<const int32_t> ids) const;   // an id out of range is an error
  int32_t special(std::string_view name) const;              // its id; unknown is an error

  int64_t vocab_size() const { return static_cast<int64_t>(bytes_.size()); }
  const std::string& bytes_of(int32_t id) const { return bytes_.at(static_cast<size_t>(id)); }
  bool is_special(int32_t id) const { return id >= 256 + static_cast<int32_t>(merges_.size()); }
  const std::vector<std::pair<int32_t, int32_t>>& merges() const { return merges_; }
  const std::vector<std::string>& special_tokens() const { return specials_; }

 private:
  Bpe(std::vector<std::pair<int32_t, int32_t>> merges, std::vector<std::string> specials);
  void encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const;

  std::vector<std::pair<int32_t, int32_t>> merges_;  // merge k makes id 256 + k
  std::vector<std::string> specials_;
  std::vector<std::string> bytes_;                   // what each id decodes to
  std::unordered_map<uint64_t, int32_t> merged_;      // pair key -> the id it merges into
};

}  // namespace orrery::text
