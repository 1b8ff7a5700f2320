// The text data plugin: documents from text files, a byte-level BPE tokenizer trained on the
// training documents (or loaded), and rows of tokens packed BOS-aligned, best-fit, as nanochat
// packs them. A sample is (rows, 1, length) token ids held as float32 values (exact below 2^24);
// the model reads row[t] to predict row[t + 1], so inputs and targets are the row shifted by one.
// Each step's units are its token's bytes (0 for BOS), so that validation reports bits per byte.
// Documents are split between training and validation by a hash of their number, the same for
// every run on the same files.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bpe.h"
#include "file_source.h"
#include "orrery/class_ids.h"
#include "orrery/error.h"
#include "orrery/input_file.h"
#include "orrery/plugin.h"
#include "packing.h"

namespace {
using namespace orrery;
using text::Bpe;

constexpr uint64_t kSplitSalt = 0x7E47'D0C5'5EED'0001ull;  // the split depends on the files only

OptionSchema schema() {
  return OptionSchema()
      .strings("files", "", "text files: a path, a glob such as \"corpus/*.txt\", or a list of them")
      .string("documents", "paragraph",
              "what one document is: a paragraph (text between blank lines), a line, or a whole file",
              {"paragraph", "line", "file"})
      .integer("vocab_size", 4096, "ids of the tokenizer trained on the training documents: 256 bytes, the merges, "
               "then the special tokens", 257, 1 << 20)
      .strings("special_tokens", "<|bos|>", "special tokens after the merges; the first begins every document")
      .string("tokenizer", "", "a tokenizer saved before (tokenizer.json) to use instead of training one (its "
              "vocabulary and special tokens then replace vocab_size and special_tokens)")
      .string("save_tokenizer", "", "where to write the tokenizer (for generation, or to load it in another run)")
      .number("validation_share", 0.05, "the share of documents held out for validation", 0, 0.9)
      .integer("buffer", 256, "document pieces drawn at a time for best-fit packing (more: fuller fits, "
               "longer documents favoured more)", 1, 1 << 20);
}

std::string read_whole(const std::string& path) {
  require_input_file(path, "a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("data plugin 'text': cannot read " + quote_input(path, 300));
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

// The documents of one file's text, as views into it; blank ones (space only) left out, and
// the blank lines before a document's first line are not part of it.
void split_documents(std::string_view text, const std::string& mode, std::vector<std::string_view>& out) {
  const auto add = [&](std::string_view d) {
    const size_t first = d.find_first_not_of(" \t\r\n\f\v");
    if (first == std::string_view::npos) return;
    const size_t line = d.rfind('\n', first);  // keep the first line's indentation
    out.push_back(d.substr(line == std::string_view::npos ? 0 : line + 1));
  };
  if (mode == "file") return add(text);
  size_t from = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') continue;
    if (mode == "line") {
      add(text.substr(from, i - from)), from = i + 1;
      continue;
    }
    // A paragraph ends at a line that is blank: the text up to this newline, when the next line
    // has nothing but spaces up to its own newline (or the end). The next starts after it.
    size_t j = i + 1;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
    if (j < text.size() && text[j] != '\n') continue;
    add(text.substr(from, i + 1 - from));
    from = std::min(j + 1, text.size());
    i = j;
  }
  if (from < text.size()) add(text.substr(from));
}

class TextSource final : public DataSource {
 public:
  // read() fills the members declared before tokenizer_, which are constructed by then.
  TextSource(const Json& o, const DataContext& ctx)
      : buffer_(o["buffer"].get<int64_t>()), tokenizer_(load_or_train(o, read(o), ctx.interrupt)) {
    bos_ = tokenizer_.special(tokenizer_.special_tokens().front());
    const auto encoded = tokenizer_.encode_all(docs_, ctx.interrupt);
    for (size_t d = 0; d < encoded.size(); ++d) {
      docs_tokens_.tokens.push_back(bos_);
      docs_tokens_.tokens.insert(docs_tokens_.tokens.end(), encoded[d].begin(), encoded[d].end());
      docs_tokens_.starts.push_back(static_cast<int64_t>(docs_tokens_.tokens.size()));
      (validation_[d] ? validation_bytes_ : train_bytes_) += static_cast<int64_t>(docs_[d].size());
      (validation_[d] ? validation_tokens_ : train_tokens_) += static_cast<int64_t>(encoded[d].size());
    }
    for (size_t d = 0; d < docs_.size(); ++d)
      if (validation_[d] == (ctx.split == Split::validation)) chosen_.push_back(static_cast<int64_t>(d));
    if (chosen_.empty())  // only validation at validation_share = 0: the training split always has some
      throw Error("data plugin 'text': validation_share = 0 holds out no documents for validation: give a share, "
                  "or turn validation off (val_batches = 0, forecast_series = 0)");
    if (const std::string out = o["save_tokenizer"]; !out.empty()) tokenizer_.save(out);
    token_bytes_ = at::empty({tokenizer_.vocab_size()}, at::kFloat);
    for (int32_t id = 0; id < tokenizer_.vocab_size(); ++id)
      token_bytes_[id] = tokenizer_.is_special(id) ? 0.0f : static_cast<float>(tokenizer_.bytes_of(id).size());
  }

  Batch sample(const SampleRequest& r) const override {
    if (r.length < 2)
      throw Error("data plugin 'text': a row needs at least 2 tokens (BOS and one more), got " + std::to_string(r.length));
    const std::vector<int32_t> ids = text::pack_rows(docs_tokens_, chosen_, r.batch, r.length, bos_, buffer_, r.seed);
    Batch b;
    b.values = at::from_blob(const_cast<int32_t*>(ids.data()), {r.batch, 1, r.length}, at::kInt).to(at::kFloat);
    b.observed = at::ones({r.batch, 1, r.length}, at::kBool);
    b.series_ids = at::arange(r.batch, at::kLong).view({r.batch, 1});
    b.units = token_bytes_.index_select(0, b.values.flatten().to(at::kLong)).view_as(b.values);
    return b;
  }

  at::Tensor encode_text(std::string_view text) const override {
    std::vector<int32_t> ids = tokenizer_.encode(text);
    ids.insert(ids.begin(), bos_);
    return at::tensor(at::IntArrayRef(std::vector<int64_t>(ids.begin(), ids.end())), at::kLong).to(at::kFloat);
  }

  std::string decode_text(const at::Tensor& values) const override {
    const at::Tensor v = values.to(at::kCPU, at::kDouble).flatten();
    if (!are_class_ids(v, tokenizer_.vocab_size()))
      throw Error("token ids are whole numbers 0 .. " + std::to_string(tokenizer_.vocab_size() - 1) +
                  " (the tokenizer's vocabulary)");
    const at::Tensor ids = v.to(at::kInt).contiguous();
    return tokenizer_.decode(std::span<const int32_t>(ids.data_ptr<int32_t>(), static_cast<size_t>(ids.numel())));
  }

  Json describe() const override {
    const auto ratio = [](int64_t bytes, int64_t tokens) { return tokens ? double(bytes) / double(tokens) : 0.0; };
    return {{"files", files_},
            {"documents", docs_.size()},
            {"validation_documents", std::count(validation_.begin(), validation_.end(), true)},
            {"train_bytes", train_bytes_},
            {"train_tokens", train_tokens_},
            {"validation_bytes", validation_bytes_},
            {"validation_tokens", validation_tokens_},
            {"bytes_per_token", ratio(train_bytes_ + validation_bytes_, train_tokens_ + validation_tokens_)},
            {"vocab_size", tokenizer_.vocab_size()},
            {"merges", tokenizer_.merges().size()},
            {"special_tokens", tokenizer_.special_tokens()},
            {"bos", bos_},
            {"unit", "byte"},
            {"tokenizer", tokenizer_source_}};
  }

 private:
  // Reads the files into documents and draws the split; returns the training documents' text.
  std::vector<std::string_view> read(const Json& o) {
    files_ = data::expand_files(o["files"], "text");
    for (const auto& f : files_) texts_.push_back(read_whole(f));  // all first: docs_ views them
    for (size_t f = 0; f < files_.size(); ++f) {
      const size_t before = docs_.size();
      split_documents(texts_[f], o["documents"], docs_);
      if (docs_.size() == before)
        throw Error("data plugin 'text': " + quote_input(files_[f], 300) + " holds no text");
    }
    const double share = o["validation_share"];
    std::vector<std::string_view> train;
    for (size_t d = 0; d < docs_.size(); ++d) {
      const bool held = static_cast<double>(mix_seed(kSplitSalt, d) % 1'000'000) < share * 1e6;
      validation_.push_back(held);
      if (!held) train.push_back(docs_[d]);
    }
    const auto held = std::count(validation_.begin(), validation_.end(), true);
    if (train.empty() || (share > 0 && held == 0)) {
      // documents = "line" helps only where the text has more lines than documents.
      size_t lines = 0;
      for (const auto& t : texts_) lines += static_cast<size_t>(std::count(t.begin(), t.end(), '\n')) + 1;
      const bool by_line = o["documents"] != "line" && lines > docs_.size();
      throw Error("data plugin 'text': " + std::to_string(docs_.size()) + " documents in " + files_label() +
                  " leave none for " + (train.empty() ? "training" : "validation") + " at validation_share = " +
                  json_text(o["validation_share"]) + ": give more text" +
                  (by_line ? std::string(" or documents = \"line\"")
                           : std::string(", or validation_share = 0 to train without validation")));
    }
    return train;
  }

  Bpe load_or_train(const Json& o, const std::vector<std::string_view>& train, const Interrupt* interrupt) {
    if (const std::string path = o["tokenizer"]; !path.empty()) {
      tokenizer_source_ = path;
      Bpe bpe = [&] {
        try {
          return Bpe::load(path);
        } catch (const Error& e) {
          throw Error(std::string("data plugin 'text' (option tokenizer): ") + e.what());
        }
      }();
      if (bpe.special_tokens().empty())
        throw Error("tokenizer " + quote_input(path, 300) + " has no special tokens: the text source begins every "
                    "document with the first, BOS");
      return bpe;
    }
    std::vector<std::string> specials;
    const Json& s = o["special_tokens"];
    if (s.is_string()) specials.push_back(s);
    else for (const auto& x : s) specials.push_back(x);
    if (specials.empty()) throw Error("data plugin 'text': special_tokens is empty; the first one is BOS");
    tokenizer_source_ = "trained";
    try {
      return Bpe::train(train, o["vocab_size"].get<int64_t>(), specials, {}, interrupt);
    } catch (const Interrupted&) {
      throw;
    } catch (const Error& e) {
      throw Error("data plugin 'text' (" + files_label() + "): " + e.what());
    }
  }

  std::string files_label() const {
    return files_.size() == 1 ? quote_input(files_.front(), 300) : std::to_string(files_.size()) + " files";
  }

  int64_t buffer_;
  std::vector<std::string> files_;
  std::vector<std::string> texts_;
  std::vector<std::string_view> docs_;
  std::vector<bool> validation_;
  std::string tokenizer_source_;
  Bpe tokenizer_;
  int32_t bos_ = 0;
  text::Documents docs_tokens_;
  std::vector<int64_t> chosen_;
  at::Tensor token_bytes_;  // (vocab) float32: the bytes each id stands for, 0 for special tokens
  int64_t train_bytes_ = 0, train_tokens_ = 0, validation_bytes_ = 0, validation_tokens_ = 0;
};

std::unique_ptr<DataSource> make(const Json& o, const DataContext& ctx) { return std::make_unique<TextSource>(o, ctx); }

}  // namespace

ORRERY_PLUGIN(data, "text", "0.1.0",
              "Text documents as token rows for language models: a byte-level BPE tokenizer trained in C++ (or "
              "loaded), BOS-aligned best-fit packing, a stable held-out split",
              schema, make)
