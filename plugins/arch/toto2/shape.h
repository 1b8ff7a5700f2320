#pragma once
// The sizes a toto2 model's options give, presets resolved: what the architecture builds and
// what the Hugging Face layout (hf_checkpoint.cpp) writes into config.json.
#include <cstdint>
#include <string>

#include "orrery/error.h"
#include "orrery/json.h"

namespace toto2 {

// The published sizes (d_head = 64, one variate layer, the last).
struct Preset {
  const char* name;
  int64_t d_model, num_layers, num_heads;
};
inline constexpr Preset kPresets[] = {{"toto2-4m", 256, 4, 4},      {"toto2-22m", 512, 6, 8},
                                      {"toto2-313m", 1024, 24, 16}, {"toto2-1b", 1536, 36, 24},
                                      {"toto2-2.5b", 2048, 48, 32}, {"toto2-proxy10m", 256, 12, 4}};

// d_ff = 8d/3 rounded up to a multiple of 8, as in the released configuration.
inline int64_t default_d_ff(int64_t d) { return (4 * d * 2 / 3 + 7) / 8 * 8; }

struct Shape {
  int64_t d_model, num_layers, num_heads, layer_group_size, variate_layers_per_group, d_ff;
};

// Options as the plugin validated them (every option present): a preset fills what is left at 0,
// then 256 wide, 4 layers, 4 heads, one group. Errors name the plugin and the option.
inline Shape shape_of(const orrery::Json& o) {
  int64_t d = o["d_model"], L = o["num_layers"], H = o["num_heads"];
  if (const std::string preset = o["preset"]; !preset.empty())
    for (const auto& p : kPresets)
      if (preset == p.name) d = d ? d : p.d_model, L = L ? L : p.num_layers, H = H ? H : p.num_heads;
  d = d ? d : 256, L = L ? L : 4, H = H ? H : 4;
  auto fail = [](const std::string& m) { return orrery::Error("architecture plugin 'toto2': " + m); };
  if (d % H != 0) throw fail("d_model " + std::to_string(d) + " is not divisible by num_heads " + std::to_string(H));
  const int64_t G = o["layer_group_size"].get<int64_t>() ? o["layer_group_size"].get<int64_t>() : L;
  const int64_t n_v = o["num_variate_layers_per_group"];
  if (L % G != 0) throw fail("num_layers " + std::to_string(L) + " is not a multiple of layer_group_size " + std::to_string(G));
  if (n_v > G)
    throw fail("num_variate_layers_per_group " + std::to_string(n_v) + " exceeds layer_group_size " + std::to_string(G));
  const int64_t d_ff = o["d_ff"].get<int64_t>() ? o["d_ff"].get<int64_t>() : default_d_ff(d);
  return {d, L, H, G, n_v, d_ff};
}

}  // namespace toto2
