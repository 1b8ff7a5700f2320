"""Golden logits of nanochat's GPT, for tests/test_gpt.cpp.

A short PyTorch model of the architecture plugins/arch/gpt/gpt.cpp implements (nanochat's
gpt.py: RMSNorm without weights after the embedding, per-layer residual and x0 scalars, rotary
embeddings on the two halves of each head, QK norm, grouped key/value heads, value embeddings
with a 2 sigmoid gate on alternating layers (the last always), windows tiled from a pattern with
the last layer always long, a ReLU^2 MLP, an untied unembedding soft-capped at 15), written from
that description with every weight random (no zero projections, gates or scalars at their
inits), so that each part moves the logits. It runs in float64 on float32 weights; Orrery runs
in float32. The weights are saved under Orrery's parameter names, with the input ids and the
logits, in tests/data/gpt-reference/case.safetensors (written by hand: no safetensors package
is needed).

    .venv/bin/python tests/reference/make_gpt_reference.py
"""
import json
import struct
from pathlib import Path

import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parent.parent / "data" / "gpt-reference"
CONFIG = dict(vocab_size=97, d_model=32, num_layers=3, num_heads=4, num_kv_heads=2, sequence_len=16,
              window_pattern="SL", ve_gate_channels=8, softcap=15.0)
BATCH, LENGTH = 3, 24  # longer than sequence_len: the long windows cut too


def has_value_embedding(layer, layers):
    return layer % 2 == (layers - 1) % 2


def weights(gen):
    c = CONFIG
    d, L, H, KV = c["d_model"], c["num_layers"], c["num_heads"], c["num_kv_heads"]
    D = d // H
    def normal(*shape, std):
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * std).float()
    w = {"wte.weight": normal(c["vocab_size"], d, std=1.0),
         "resid_lambdas": normal(L, std=0.2), "x0_lambdas": normal(L, std=0.2),
         "lm_head.unembed.weight": normal(c["vocab_size"], d, std=1.5)}  # some logits past the cap
    for i in range(L):
        p = f"layers.{i}."
        w[p + "attn.c_q.weight"] = normal(H * D, d, std=d ** -0.5)
        w[p + "attn.c_k.weight"] = normal(KV * D, d, std=d ** -0.5)
        w[p + "attn.c_v.weight"] = normal(KV * D, d, std=d ** -0.5)
        w[p + "attn.c_proj.weight"] = normal(d, H * D, std=(H * D) ** -0.5)
        if has_value_embedding(i, L):
            w[p + "value_embedding.weight"] = normal(c["vocab_size"], KV * D, std=1.0)
            w[p + "attn.ve_gate.weight"] = normal(KV, c["ve_gate_channels"], std=1.0)
        w[p + "mlp.c_fc.weight"] = normal(4 * d, d, std=d ** -0.5)
        w[p + "mlp.c_proj.weight"] = normal(d, 4 * d, std=(4 * d) ** -0.5)
    return w


def rotate(x, cos, sin):  # x (B, T, heads, D); the two halves of a head are a pair's coordinates
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos + x2 * sin, x2 * cos - x1 * sin], -1)


def logits(w, ids):
    c = CONFIG
    d, L, H, KV = c["d_model"], c["num_layers"], c["num_heads"], c["num_kv_heads"]
    D, B, T = d // H, ids.shape[0], ids.shape[1]
    w = {k: v.double() for k, v in w.items()}
    eps = torch.finfo(torch.float32).eps
    norm = lambda x: F.rms_norm(x, (x.shape[-1],), eps=eps)
    inv = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv)
    cos, sin = angles.cos()[None, :, None, :], angles.sin()[None, :, None, :]
    x = norm(w["wte.weight"][ids])
    x0 = x
    for i in range(L):
        p = f"layers.{i}."
        x = (1 + w["resid_lambdas"][i]) * x + (0.1 + w["x0_lambdas"][i]) * x0
        h = norm(x)
        q = (h @ w[p + "attn.c_q.weight"].T).view(B, T, H, D)
        k = (h @ w[p + "attn.c_k.weight"].T).view(B, T, KV, D)
        v = (h @ w[p + "attn.c_v.weight"].T).view(B, T, KV, D)
        if has_value_embedding(i, L):
            ve = w[p + "value_embedding.weight"][ids].view(B, T, KV, D)
            gate = 2 * torch.sigmoid(h[..., :c["ve_gate_channels"]] @ w[p + "attn.ve_gate.weight"].T)
            v = v + gate.unsqueeze(-1) * ve
        q, k = norm(rotate(q, cos, sin)), norm(rotate(k, cos, sin))
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        k, v = k.repeat_interleave(H // KV, 1), v.repeat_interleave(H // KV, 1)
        short = c["window_pattern"][i % len(c["window_pattern"])] == "S" and i != L - 1
        window = c["sequence_len"] // 2 if short else c["sequence_len"]
        back = torch.arange(T)[:, None] - torch.arange(T)[None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=(back >= 0) & (back <= window))
        x = x + y.transpose(1, 2).reshape(B, T, H * D) @ w[p + "attn.c_proj.weight"].T
        h = norm(x)
        x = x + F.relu(h @ w[p + "mlp.c_fc.weight"].T).square() @ w[p + "mlp.c_proj.weight"].T
    z = norm(x) @ w["lm_head.unembed.weight"].T
    return c["softcap"] * torch.tanh(z / c["softcap"])


def save_safetensors(path, tensors, metadata):
    """The safetensors layout: an 8-byte header length, a JSON header, then the raw bytes."""
    dtypes = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        data = bytes(t.flatten().view(torch.uint8).tolist())  # little-endian, as safetensors
        header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    gen = torch.Generator().manual_seed(30)
    w = weights(gen)
    ids = torch.randint(0, CONFIG["vocab_size"], (BATCH, LENGTH), generator=gen)
    out = logits(w, ids)
    OUT.mkdir(parents=True, exist_ok=True)
    tensors = dict(w)
    tensors["case.ids"] = ids
    tensors["case.logits"] = out
    save_safetensors(OUT / "case.safetensors", tensors, {"config": json.dumps(CONFIG)})
    print(f"wrote {OUT / 'case.safetensors'}: logits {tuple(out.shape)}, |logit| max {out.abs().max():.2f}")


if __name__ == "__main__":
    main()
