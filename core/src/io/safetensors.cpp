#include "orrery/safetensors.h"

#include <ATen/ATen.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/input_file.h"
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

namespace {

// The header of a safetensors file, checked against the format: every entry a known dtype, a
// shape of non-negative integers and data_offsets [begin, end] whose length fits the shape;
// the ranges, sorted, tile the data area exactly (no overlap, no hole, nothing after).
struct Header {
  struct Entry {
    std::string name;
    at::ScalarType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;  // sorted by begin
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;
};

Header read_header(std::ifstream& in, const std::string& path) {
  auto bad = [&](const std::string& why) { return Error(path + ": not a valid safetensors file: " + why); };
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot read " + path + ": " + ec.message());
  uint64_t n = 0;
  if (size < 8 || !in.read(reinterpret_cast<char*>(&n), 8)) throw bad("shorter than its 8-byte header length");
  if (n > size - 8 || n > (100u << 20)) throw bad("header length " + std::to_string(n) + " exceeds the file");
  std::string text(n, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(n))) throw bad("truncated header");
  Json header;
  try {
    header = Json::parse(text);
  } catch (const std::exception&) {
    throw bad("its header is not JSON");
  }
  if (!header.is_object()) throw bad("its header is not a JSON object");
  Header h;
  h.data_start = 8 + n;
  for (const auto& [name, e] : header.items()) {
    if (name == "__metadata__") {
      if (!e.is_object()) throw bad("__metadata__ is not an object of strings");
      for (const auto& [k, v] : e.items()) {
        if (!v.is_string()) throw bad("__metadata__ entry '" + k + "' is not a string");
        h.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    auto bad_tensor = [&](const std::string& why) { return bad("tensor '" + name + "' " + why); };
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      throw bad_tensor("lacks dtype, shape or data_offsets");
    Header::Entry entry{name, at::kFloat, {}, 0, 0};
    bool known = false;
    for (const auto& [dn, st] : kDtypes)
      if (e["dtype"] == dn) entry.dtype = st, known = true;
    if (!known) throw bad_tensor("has unsupported dtype " + e["dtype"].dump());
    const Json& shape = e["shape"];
    if (!shape.is_array()) throw bad_tensor("has a shape that is not a list: " + shape.dump());
    // extent: the product of the sizes other than 0. A 0 makes the tensor empty, but torch still
    // takes the other sizes as int64 and multiplies them into strides, so [0, 2^63] or
    // [0, 2^62, 2^62] must be refused here, not by a c10::Error from at::empty (fuzz_safetensors).
    uint64_t numel = 1, extent = 1;
    for (const auto& d : shape) {
      if (!d.is_number_unsigned()) throw bad_tensor("has a shape that is not a list of sizes: " + shape.dump());
      const uint64_t dim = d.get<uint64_t>();
      // At most 2^60, so that bytes = numel x (at most 8) cannot overflow below.
      if (dim > 0 && extent > (uint64_t{1} << 60) / dim) throw bad_tensor("has an impossible shape " + shape.dump());
      if (dim > 0) extent *= dim;
      numel *= dim;
      entry.shape.push_back(static_cast<int64_t>(dim));
    }
    const Json& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw bad_tensor("has data_offsets that are not two byte offsets [begin, end]: " + off.dump());
    entry.begin = off[0].get<uint64_t>(), entry.end = off[1].get<uint64_t>();
    const uint64_t bytes = numel * c10::elementSize(entry.dtype);
    if (entry.end < entry.begin || entry.end - entry.begin != bytes)
      throw bad_tensor("has data_offsets " + off.dump() + " (" + std::to_string(entry.end - entry.begin) +
                       " bytes) but its dtype and shape " + shape.dump() + " need " + std::to_string(bytes));
    h.entries.push_back(std::move(entry));
  }
  std::sort(h.entries.begin(), h.entries.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expected = 0;
  const Header::Entry* previous = nullptr;
  for (const auto& e : h.entries) {
    if (e.begin < expected)
      throw bad("tensors '" + previous->name + "' and '" + e.name + "' overlap (bytes " + std::to_string(e.begin) +
                " to " + std::to_string(expected) + ")");
    if (e.begin > expected)
      throw bad("bytes " + std::to_string(expected) + " to " + std::to_string(e.begin) +
                " of the data belong to no tensor (before '" + e.name + "')");
    expected = e.end, previous = &e;
  }
  const uint64_t data_size = size - h.data_start;
  if (expected > data_size)
    throw bad("tensor '" + previous->name + "' ends at byte " + std::to_string(expected) + " of the data, but the file holds " +
              std::to_string(data_size) + " (truncated?)");
  if (expected < data_size)
    throw bad(std::to_string(data_size - expected) + " bytes after the last tensor belong to no tensor");
  return h;
}

std::ifstream open_binary(const std::string& path) {
  require_input_file(path, "a safetensors file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno));
  return in;
}

}  // namespace

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  std::ifstream in = open_binary(path);
  return read_header(in, path).metadata;
}

SafetensorsFile load_safetensors(const std::string& path) {
  std::ifstream in = open_binary(path);
  const Header h = read_header(in, path);
  SafetensorsFile file;
  file.metadata = h.metadata;
  for (const auto& e : h.entries) {
    at::Tensor t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
    in.seekg(static_cast<std::streamoff>(h.data_start + e.begin));
    if (!in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(e.end - e.begin)))
      throw Error(path + ": not a valid safetensors file: tensor '" + e.name + "' is truncated");
    file.tensors.emplace_back(e.name, t);
  }
  return file;
}

}  // namespace orrery
