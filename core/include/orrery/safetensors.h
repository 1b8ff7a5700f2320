#pragma once
// The safetensors format, so Python (safetensors, transformers) reads Orrery's weights and
// Orrery reads Hugging Face checkpoints: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the raw
// little-endian tensor bytes. Files are written to a temporary name and renamed.
#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});

struct SafetensorsFile {
  NamedTensors tensors;  // in file order, on the CPU
  std::map<std::string, std::string> metadata;
  const at::Tensor* find(const std::string& name) const;
};

// Throws orrery::Error naming the file, the tensor and what is wrong with it. The header is
// checked against the format before any data is read: known dtypes, shapes that fit their
// byte ranges, ranges that tile the data exactly (no overlap, no hole).
SafetensorsFile load_safetensors(const std::string& path);
// The header's __metadata__ alone, checked the same way; no tensor data is read.
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

}  // namespace orrery
