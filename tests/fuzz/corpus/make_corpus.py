# Writes the fuzz targets' seed corpus: small real inputs of each kind, each with the option
# byte(s) its target reads first (see tests/fuzz/fuzz_<name>.cpp). Seeds named crash-* are
# inputs that once crashed a reader; this script leaves them alone.
#   .venv/bin/python tests/fuzz/corpus/make_corpus.py
import io
import json
import os
import struct

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def seed(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- csv: byte 0 = layout (bits 0-1), time format (2-3), multivariate (4), tiny chunks (5),
# tiny memory budget (6), timestamp none (7); byte 1 = chunk size (bits 0-3), frequency (4-6),
# named value columns v, w (7). Frequencies: 0, 1 inferred, 2 D, 3 H, 4 M, 5 B, 6 10S, 7 W.
def csv(name, a, b, text):
    seed("csv", name, bytes([a, b]) + text.encode())


csv("wide_daily.csv", 0, 0, "date,a,b\n2024-01-01,1,10\n2024-01-02,2,\n2024-01-04,4,13\n2024-01-05,NA,14\n")
csv("wide_quoted_crlf.csv", 32, 3,
    '\ufefftime,"a, quoted",b\r\n2024-01-01 00:00,"1.5",2\r\n\r\n2024-01-01 01:00, 2 ,"3"\r\n"2024-01-01 02:00",,null\r\n')
csv("wide_multivariate.csv", 16, 0, "timestamp,x,y,label\n2024-03-01,1,2,a\n2024-03-02,3,,b\n2024-03-03,,6,c\n")
csv("long_hourly.csv", 2, 0,
    "item_id,timestamp,target\na,2024-01-01 00:00,1\nb,2024-01-01 00:00,5\na,2024-01-01 01:00,2\n"
    "b,2024-01-01 01:00,6\na,2024-01-01 02:00,3\n")
csv("long_spilled.csv", 2 | 64, 0,
    "series,time,v\ns1,2024-01-01,1\ns2,2024-01-01,2\ns3,2024-01-01,3\ns1,2024-01-02,4\ns2,2024-01-03,5\n"
    "s3,2024-01-02,6\n")
csv("long_multivariate.csv", 2 | 16, 0, "series,time,x,y\ns1,2024-01-01,1,10\ns2,2024-01-01,3,30\ns1,2024-01-02,2,20\n"
    "s2,2024-01-02,4,\n")
csv("year_fraction.csv", 8, 0, "time,value\n1959,315.42\n1959.083333,316.31\n1959.166667,316.5\n1959.25,317.56\n")
csv("unix_seconds.csv", 4, 0, "time,v\n1700000000,1\n1700003600,2\n1700010800,4\n")
csv("untimed_columns.csv", 128, 128, "v,w,z\n1,2,3\n3,4,5\n5,,7\n")
csv("business_days.csv", 0, 5 << 4, "date,v\n2024-01-05,1\n2024-01-08,2\n2024-01-09,3\n2024-01-10,4\n")
csv("monthly.csv", 0, 4 << 4, "date,v\n2023-01-31,1\n2023-02-28,2\n2023-04-30,4\n")
csv("iso_offsets.csv", 0, 0, "ds,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:15:00+00:00,2\n2024-01-01T01:30:00.000+01:00,3\n")
csv("ten_seconds.csv", 32, (6 << 4) | 1, "time,v\n2024-01-01 00:00:00,1\n2024-01-01 00:00:10,2\n2024-01-01 00:00:40,5\n")


# ---- training_data: byte 0 = layout (bits 0-1), holdout 0.1/0/0.5/1 (2-3), exclude_last (4-5),
# multivariate (6), timestamp none (7); byte 1 = the batch's length - 1 (mod 97) and chunk size.
def training(name, a, b, text):
    seed("training_data", name, bytes([a, b]) + text.encode())


training("wide_daily.csv", 0, 40, "date,a,b\n" + "".join(f"2024-01-{d:02d},{d},{d * 2 % 7}\n" for d in range(1, 29)))
training("long_split_in_time.csv", 2 | (2 << 2), 9,
         "id,time,v\n" + "".join(f"s,2024-01-01 {h:02d}:00,{h}\n" for h in range(24)))
training("long_held_out.csv", 2, 60,
         "item_id,t,v\n" + "".join(f"{k},{t},{k * t}\n" for k in "abcdefgh" for t in range(1, 30)) + "")
training("multivariate_gaps.csv", 64 | (1 << 4), 17,
         "time,x,y\n2024-01-01,1,\n2024-01-02,,2\n2024-01-04,3,3\n2024-01-05,NA,-\n2024-01-06,5,6\n")
training("untimed_short.csv", 128, 3, "v\n1\n2\n")


# ---- parquet: byte 0 as csv's byte 0, but bit 5 = 3 rows per batch; then a Parquet or Arrow file.
def arrow(name, a, table, kind, **kw):
    sink = io.BytesIO()
    if kind == "parquet":
        pq.write_table(table, sink, compression="none", write_statistics=False, **kw)
    elif kind == "feather":
        feather.write_feather(table, sink, compression="uncompressed")
    else:
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
    seed("parquet", name, bytes([a]) + sink.getvalue())


wide = pa.table({"time": pa.array([0, 3600, 7200, 14400], pa.timestamp("s")).cast(pa.timestamp("ns")),
                 "a": pa.array([1.0, 2.0, None, 4.0]), "b": pa.array([1, 2, 3, 4], pa.int32())})
long = pa.table({"id": pa.array(["x", "y", "x", "y", "x"]).dictionary_encode(),
                 "date": pa.array([19723, 19723, 19724, 19724, 19725], pa.date32()),
                 "value": pa.array([1.0, 2.0, 3.0, None, 5.0], pa.float32())})
text = pa.table({"ds": pa.array(["2024-01-01", "2024-01-02", "2024-01-03"], pa.large_string()),
                 "v": pa.array(["1", "NA", "3.5"]), "n": pa.array([1, 2, 3], pa.uint8())})
years = pa.table({"time": pa.array([1949.0, 1949.0833, 1949.1667]), "value": pa.array([112, 118, 132], pa.int64())})
arrow("wide.parquet", 0, wide, "parquet")
arrow("long.parquet", 2, long, "parquet")
arrow("row_groups.parquet", 32 | 64, long, "parquet", row_group_size=2)
arrow("wide.arrow", 0, wide, "feather")
arrow("text.arrows", 0, text, "stream")
arrow("years.parquet", 8, years, "parquet")


# ---- safetensors: the file as it is; or, starting with '{', the header's JSON, a NUL byte and
# the data (the harness adds the length).
def safetensors(name, tensors, metadata=None, split=False):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for n, t in tensors.items():
        raw = bytes(t.reshape(-1).contiguous().view(torch.uint8).tolist())
        dtype = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
                 torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
                 torch.uint8: "U8", torch.bool: "BOOL"}[t.dtype]
        header[n] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    seed("safetensors", name, text + b"\0" + data if split else struct.pack("<Q", len(text)) + text + data)


torch.manual_seed(0)
safetensors("weights.safetensors", {"w": torch.randn(2, 3), "step": torch.tensor([7], dtype=torch.int64)},
            {"format": "pt", "spec": '{"arch": "mlp"}'})
safetensors("dtypes.safetensors", {"h": torch.randn(3).half(), "b": torch.randn(2).bfloat16(),
                                   "mask": torch.tensor([True, False]), "u": torch.arange(4, dtype=torch.uint8),
                                   "i": torch.arange(3, dtype=torch.int16), "d": torch.randn(1, 1).double(),
                                   "empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5)})
safetensors("no_tensors.safetensors", {}, {"note": "metadata only"})
safetensors("split_weights.json", {"w": torch.randn(3, 2), "b": torch.zeros(2, dtype=torch.int32)}, {"format": "pt"},
            split=True)
safetensors("split_empty.json", {"e": torch.zeros(0, 4), "s": torch.tensor(True)}, split=True)

# ---- options: byte 0 = schema (0 the trainer's, 1 the csv plugin's, 2 every type); then JSON.
def options(name, pick, doc):
    seed("options", name, bytes([pick]) + (doc if isinstance(doc, str) else json.dumps(doc)).encode())


options("train.json", 0, {"steps": 100, "batch_size": 8, "schedule": {"kind": "cosine", "warmup": 0.1},
                          "momentum": {"from": 0.85, "to": 0.95}, "weight_decay_schedule": "linear"})
options("train_floats.json", 0, {"steps": 1e3, "clip": 0.5, "seed": 42, "cpm": False, "prefetch": 2.0})
options("train_typo.json", 0, {"stepz": 3})
options("csv.json", 1, {"files": ["a.csv", "b.csv"], "layout": "long", "holdout": 0.2, "value": "x, y"})
options("every.json", 2, {"count": 5, "rate": 0.25, "kind": "bb", "levels": [0.1, 0.9], "schedule": {},
                          "sources": [1, "a"], "files": ["x"], "flag": True, "offset": -3, "scale": 1e300})
options("every_bad.json", 2, '{"count": 2.5, "seed": -1, "rate": "x", "levels": [], "files": []}')
options("null.json", 2, "null")

# ---- lua: a chunk returning the value to convert.
lua = {
    "model.lua": 'return {arch = {"toto2", d_model = 128, num_layers = 4}, head = "quantile", param = "sp"}',
    "train.lua": 'return {steps = 100, schedule = {kind = "wsd", warmup = 0.05}, momentum = {from = 0.85}}',
    "list.lua": "return {1, 2.5, -3, {x = 1.5, y = true}, 'text', {}}",
    "sequence.lua": "local t = {} for i = 1, 100 do t[i] = i * 0.5 end return t",
    "holes.lua": 'return {[1] = "a", [3] = "c"}',
    "mixed.lua": 'return {1, 2, x = 3}',
    "self.lua": "local t = {} t.self = t return t",
    "deep.lua": "local t = {} local c = t for i = 1, 100 do c.x = {} c = c.x end return t",
    "function.lua": "return {f = function() end}",
    "loop.lua": "while true do end",
    "pcall_loop.lua": "while true do pcall(function() while true do end end) end",
    "gc.lua": "return setmetatable({}, {__gc = function() while true do end end})",
    "memory.lua": "local t = {} for i = 1, 1e9 do t[i] = {} end",
}
for name, chunk in lua.items():
    seed("lua", name, chunk)
