"""Golden forecasts from the released Toto 2.0 code, for tests/test_reference.cpp.

Builds a small Toto2Model (the published layout: d_head 64, attention biases, PerDimScale,
xPos, one variate layer, the last) with seeded random weights, saves it as a Hugging Face
folder (config.json + model.safetensors, the released parameter names and tau buffers), and
records its forecasts of a seeded multivariate batch with missing values, in one pass and with
block decoding (2 and 4 blocks), into tests/data/toto2-reference/.

Needs the reference package from PyPI (it declares Python >= 3.12 but runs on 3.11):
    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install torch "numpy<2.4" einops \\
        "gluonts[torch]" huggingface-hub safetensors jaxtyping unit-scaling
    /tmp/ref/bin/pip install --no-deps --ignore-requires-python toto-2 dd-unit-scaling
    /tmp/ref/bin/python tests/reference/make_toto2_reference.py
"""
import json
import math
from pathlib import Path

import torch
from safetensors.torch import save_file
from toto2.configuration import Toto2ModelConfig
from toto2.model import Toto2Model

OUT = Path(__file__).resolve().parent.parent / "data" / "toto2-reference"
CONFIG = dict(
    patch_size=32, d_model=128, num_heads=2, num_layers=3, layer_group_size=3,
    num_variate_layers_per_group=1, variate_layer_first=False, norm_eps=1e-4,
    attn_bias=True, mlp_bias=False, qk_norm=False, per_dim_scale=True, use_xpos=True,
    residual_mult=0.75,
    residual_attn_ratio=Toto2ModelConfig.compute_residual_attn_ratio(4096, 32),
)
HORIZON = 100


def main():
    torch.manual_seed(0)
    model = Toto2Model(Toto2ModelConfig(**CONFIG)).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:  # biases and PerDimScale start at 0: make them matter
                p.normal_(0.0, 0.3)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    # Weights as float16 (small files; both sides compute in float32 from the same values);
    # the tau buffers stay float32, as the released checkpoints store them.
    weights = {k: (v if k.endswith("_tau") else v.half()) for k, v in state.items()}
    OUT.mkdir(parents=True, exist_ok=True)
    save_file(weights, str(OUT / "model.safetensors"), metadata={"format": "pt"})
    (OUT / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")
    model.load_state_dict({k: v.float() for k, v in weights.items()})

    # Two batches of three variates over ten patches: trend + two seasonalities + noise at
    # scales 0.01 to 1e3; series ids group variates (0,0,1) and (0,1,2); a missing stretch,
    # a fully missing patch and scattered gaps, the last patch always observed.
    g = torch.Generator().manual_seed(1)
    B, V, T = 2, 3, 320
    t = torch.arange(T, dtype=torch.float32)
    level = torch.tensor([[1.0, 50.0, 0.01], [1000.0, 3.0, 20.0]]).unsqueeze(-1)
    phase = torch.rand(B, V, 1, generator=g) * 6
    target = level * (1 + 0.3 * torch.sin(t / 7 + phase) + 0.1 * torch.sin(t / 40 + 2 * phase)
                      + 0.001 * t + 0.05 * torch.randn(B, V, T, generator=g))
    mask = torch.ones(B, V, T, dtype=torch.bool)
    mask[0, 1, 96:128] = False           # one whole patch
    mask[1, 2, 150:170] = False          # a stretch
    mask[1, 0] &= torch.rand(T, generator=g) > 0.1  # scattered gaps
    mask[..., -32:] = True
    target = torch.where(mask, target, torch.zeros(()))
    series_ids = torch.tensor([[0, 0, 1], [0, 1, 2]])

    inputs = {"target": target, "target_mask": mask, "series_ids": series_ids}
    with torch.no_grad():
        single = model.forecast(inputs, HORIZON)
        block = model.forecast(inputs, HORIZON, decode_block_size=64)
        block_32 = model.forecast(inputs, HORIZON, decode_block_size=32)
    save_file({"target": target, "target_mask": mask.to(torch.uint8), "series_ids": series_ids,
               "single_pass": single.contiguous(), "block_64": block.contiguous(),
               "block_32": block_32.contiguous()},
              str(OUT / "case.safetensors"), metadata={"horizon": str(HORIZON)})
    print("wrote", OUT, "forecast", tuple(single.shape),
          "block vs single max |diff|", float((block - single).abs().max()))


if __name__ == "__main__":
    main()
