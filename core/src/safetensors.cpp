#include "orrery/safetensors.h"

#include <ATen/ATen.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/json.h"

namespace orrery {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

const std::pair<const char*, at::ScalarType> kDtypes[] = {
    {"F64", at::kDouble}, {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16},
    {"I64", at::kLong},   {"I32", at::kInt},   {"I16", at::kShort}, {"I8", at::kChar},
    {"U8", at::kByte},    {"BOOL", at::kBool}};

const char* dtype_name(at::ScalarType t) {
  for (const auto& [n, s] : kDtypes)
    if (s == t) return n;
  throw Error(std::string("safetensors: unsupported dtype ") + c10::toString(t));
}

}  // namespace

const at::Tensor* SafetensorsFile::find(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return &t;
  return nullptr;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || header.contains(name))
      throw Error("safetensors: duplicate or reserved tensor name '" + name + "' for " + path);
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    const uint64_t bytes = c.numel() * c.element_size();
    header[name] = {{"dtype", dtype_name(c.scalar_type())}, {"shape", c.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(c);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keep the data 8-byte aligned
  write_file_atomically(path, [&](std::ostream& out) {
    const uint64_t n = text.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out.write(text.data(), static_cast<std::streamsize>(n));
    for (const auto& c : data)
      out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * c.element_size()));
  });
}

SafetensorsFile load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path);
  auto bad = [&](const std::string& why) { return Error(path + ": not a valid safetensors file: " + why); };
  const uint64_t size = std::filesystem::file_size(path);
  uint64_t n = 0;
  if (size < 8 || !in.read(reinterpret_cast<char*>(&n), 8)) throw bad("shorter than its 8-byte header length");
  if (n > size - 8 || n > (100u << 20)) throw bad("header length " + std::to_string(n) + " exceeds the file");
  std::string text(n, '\0');
  in.read(text.data(), static_cast<std::streamsize>(n));
  Json header;
  try {
    header = Json::parse(text);
  } catch (const std::exception& e) {
    throw bad(std::string("header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) throw bad("header is not a JSON object");
  const uint64_t data_size = size - 8 - n;
  SafetensorsFile file;
  std::vector<std::tuple<uint64_t, std::string, Json>> entries;
  for (const auto& [name, e] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : e.items())
        if (v.is_string()) file.metadata[k] = v.get<std::string>();
      continue;
    }
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      throw bad("entry '" + name + "' lacks dtype, shape or data_offsets");
    entries.emplace_back(e["data_offsets"][0].get<uint64_t>(), name, e);
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [begin_, name, e] : entries) {
    at::ScalarType type = at::kFloat;
    bool known = false;
    for (const auto& [dn, st] : kDtypes)
      if (e["dtype"] == dn) type = st, known = true;
    if (!known) throw bad("tensor '" + name + "' has unsupported dtype " + e["dtype"].dump());
    std::vector<int64_t> shape = e["shape"].get<std::vector<int64_t>>();
    const uint64_t begin = e["data_offsets"][0], end = e["data_offsets"][1];
    at::Tensor t = at::empty(shape, at::TensorOptions().dtype(type));
    const uint64_t bytes = t.numel() * t.element_size();
    if (end < begin || end > data_size || end - begin != bytes)
      throw bad("tensor '" + name + "' has data_offsets [" + std::to_string(begin) + ", " +
                std::to_string(end) + "] that do not fit its shape or the file");
    in.seekg(static_cast<std::streamoff>(8 + n + begin));
    if (!in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(bytes)))
      throw bad("tensor '" + name + "' is truncated");
    file.tensors.emplace_back(name, t);
  }
  return file;
}

}  // namespace orrery
