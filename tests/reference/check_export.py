"""The released toto-2 package's forecast of a model Orrery exported, for tests/test_reference.cpp.

    python check_export.py EXPORT_DIR CASE.safetensors OUT.safetensors

EXPORT_DIR is what `orrery export` (or model:export) wrote; CASE holds a batch, `target` (B, V, T)
float32, `target_mask` (B, V, T) uint8 and `series_ids` (B, V) int64, with the horizon in its
metadata. OUT gets `quantiles`, the released model's forecast (Q, B, V, horizon). The package
(toto-2 and what it imports) is installed into .venv by cmake/setup.sh.
"""
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from toto2 import Toto2Model


def main(export_dir, case_path, out_path):
    model = Toto2Model.from_pretrained(export_dir)  # strict: every tensor of the state dict, no other
    case = load_file(case_path)
    with safe_open(case_path, framework="pt") as f:
        horizon = int(f.metadata()["horizon"])
    inputs = {"target": case["target"], "target_mask": case["target_mask"].bool(), "series_ids": case["series_ids"]}
    with torch.no_grad():
        quantiles = model.forecast(inputs, horizon)
    save_file({"quantiles": quantiles.contiguous()}, out_path)
    print("released toto-2 forecast", tuple(quantiles.shape))


if __name__ == "__main__":
    main(*sys.argv[1:])
