"""Times the released Toto 2.0 code (toto2.model.Toto2Model.forecast) on the same shapes, data
and thread count as `orrery bench forecast`, which runs this script with --reference and prints
the ratio. Prints one line: `median_ms X`.

    orrery bench forecast --reference "/tmp/ref/bin/python tests/reference/bench_toto2_reference.py"

--precision bf16 runs the forecast under torch.autocast to bfloat16, as Orrery's does.

(see make_toto2_reference.py for installing the reference package)
"""
import argparse
import statistics
import time

import torch
from toto2.configuration import Toto2ModelConfig
from toto2.model import Toto2Model

PRESETS = {  # d_model, num_layers, num_heads of the published Toto 2.0 sizes
    "toto2-4m": (256, 4, 4), "toto2-22m": (512, 6, 8), "toto2-313m": (1024, 24, 16),
    "toto2-1b": (1536, 36, 24), "toto2-2.5b": (2048, 48, 32), "toto2-proxy10m": (256, 12, 4),
}


def main():
    p = argparse.ArgumentParser()
    for name, default in [("context", 4096), ("horizon", 1024), ("batch", 8), ("variates", 1),
                          ("repeats", 10), ("warmup", 2), ("decode-block-size", 0), ("threads", 0)]:
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--preset", default="toto2-4m")
    p.add_argument("--device", default="cpu")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    d, layers, heads = PRESETS[a.preset]
    config = Toto2ModelConfig(
        patch_size=32, d_model=d, num_heads=heads, num_layers=layers, layer_group_size=layers,
        num_variate_layers_per_group=1, variate_layer_first=False, norm_eps=1e-4, attn_bias=True,
        mlp_bias=False, qk_norm=False, per_dim_scale=True, use_xpos=True, residual_mult=0.75,
        residual_attn_ratio=Toto2ModelConfig.compute_residual_attn_ratio(4096, 32))
    model = Toto2Model(config).eval().to(a.device)
    # The same seeded sine batch as the C++ bench.
    t = torch.arange(a.context, dtype=torch.float32)
    phase = torch.arange(a.batch * a.variates, dtype=torch.float32).view(a.batch, a.variates, 1)
    target = (10 + torch.sin(t / 24 + phase) + 0.3 * torch.sin(t / 168 + 2 * phase)).to(a.device)
    inputs = {"target": target, "target_mask": torch.ones_like(target, dtype=torch.bool),
              "series_ids": torch.zeros(a.batch, a.variates, dtype=torch.long, device=a.device)}
    times = []
    # bf16: the forward under autocast, as Orrery's --precision bf16 (weights stay float32).
    autocast = torch.autocast(torch.device(a.device).type, dtype=torch.bfloat16, enabled=a.precision == "bf16")
    with torch.inference_mode(), autocast:
        for r in range(a.warmup + a.repeats):
            start = time.perf_counter()
            q = model.forecast(inputs, a.horizon, decode_block_size=a.decode_block_size).cpu()
            elapsed = (time.perf_counter() - start) * 1000
            assert torch.isfinite(q).all()
            if r >= a.warmup:
                times.append(elapsed)
    print(f"median_ms {statistics.median(times):.3f}")


if __name__ == "__main__":
    main()
