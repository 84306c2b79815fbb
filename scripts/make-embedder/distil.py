"""Distil a static (Model2Vec-style) embedding model from all-MiniLM-L6-v2.

Run by scripts/make-embedder/make-embedder inside its pinned venv; it needs
numpy, safetensors and tokenizers only (the six BERT layers run in numpy).

Steps, all deterministic:
  1. every vocabulary token t is encoded alone as [CLS] t [SEP] through the
     transformer and its output mean-pooled over the three positions (the
     model's own pooling: mean over tokens, attention mask all ones);
  2. PCA (centred SVD) to DIM dimensions, signs fixed so that each component's
     largest-magnitude loading is positive;
  3. SIF weighting by Zipf rank: w = a / (a + p(rank)), p ~ 1/rank; BERT's
     vocabulary is frequency-ordered from id 1996 ("the") on, so rank = id-1995
     there and the ids below (characters, punctuation, unused) count as rank 1;
  4. int8 per-row quantisation (scale = max |v| / 127).

Outputs: OUT/vectors.bin (format in memsync/embed/doc.go), OUT/vocab.txt (the
model's WordPiece vocabulary, unchanged) and, with --golden, the tokenizer ids
and float32 sentence vectors of testdata/fixture.txt for the Go golden test.
"""

import argparse
import json
import math
import os
import shutil
import struct

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

DIM = 256
SIF = 1e-4
FIRST_WORD_ID = 1996
HEADS = 12
EPS = 1e-12


def erf(x):
    # Numerical Recipes' erfc (Chebyshev fit, fractional error < 1.2e-7,
    # far below float32's resolution), vectorised in float64.
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0)


def gelu(x):
    # Exact GELU (BERT's "gelu"), computed in float64 for determinism.
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)))).astype(np.float32)


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


def encode(W, ids):
    """Last hidden states of BERT for a [batch, seq] id matrix, no padding."""
    bsz, seq = ids.shape
    x = (
        W["embeddings.word_embeddings.weight"][ids]
        + W["embeddings.position_embeddings.weight"][:seq][None]
        + W["embeddings.token_type_embeddings.weight"][0][None, None]
    )
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    hid = x.shape[-1]
    hd = hid // HEADS
    i = 0
    while "encoder.layer.%d.attention.self.query.weight" % i in W:
        p = "encoder.layer.%d." % i

        def lin(name, h):
            return h @ W[p + name + ".weight"].T + W[p + name + ".bias"]

        q = lin("attention.self.query", x).reshape(bsz, seq, HEADS, hd).transpose(0, 2, 1, 3)
        k = lin("attention.self.key", x).reshape(bsz, seq, HEADS, hd).transpose(0, 2, 1, 3)
        v = lin("attention.self.value", x).reshape(bsz, seq, HEADS, hd).transpose(0, 2, 1, 3)
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
        att = np.exp(att - att.max(-1, keepdims=True))
        att = att / att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, hid)
        x = layer_norm(
            x + lin("attention.output.dense", ctx),
            W[p + "attention.output.LayerNorm.weight"],
            W[p + "attention.output.LayerNorm.bias"],
        )
        inter = gelu(lin("intermediate.dense", x))
        x = layer_norm(
            x + lin("output.dense", inter),
            W[p + "output.LayerNorm.weight"],
            W[p + "output.LayerNorm.bias"],
        )
        i += 1
    return x


def read_vocab(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--golden")
    ap.add_argument("--cache", help="a directory to keep the per-token transformer outputs in")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=DIM, help="PCA dimensions (experiments; the built-in model uses the default)")
    ap.add_argument("--sif", type=float, default=SIF, help="SIF coefficient (experiments)")
    a = ap.parse_args()

    W = {k: v.astype(np.float32) for k, v in load_file(os.path.join(a.src, "model.safetensors")).items() if v.dtype != np.int64}
    vocab = read_vocab(os.path.join(a.src, "vocab.txt"))
    tok = {t: i for i, t in enumerate(vocab)}
    cls, sep = tok["[CLS]"], tok["[SEP]"]
    n = len(vocab)

    # 1. one forward pass per token (kept in the cache: the slow step).
    cached = os.path.join(a.cache, "token-outputs.npy") if a.cache else None
    if cached and os.path.exists(cached):
        emb = np.load(cached)
    else:
        emb = np.zeros((n, W["embeddings.word_embeddings.weight"].shape[1]), np.float32)
        for start in range(0, n, a.batch):
            ids = np.arange(start, min(n, start + a.batch))
            seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], 1)
            emb[ids] = encode(W, seq).mean(1)
            print("encoded %d/%d" % (ids[-1] + 1, n), flush=True)
        if cached:
            np.save(cached + ".tmp.npy", emb)
            os.replace(cached + ".tmp.npy", cached)

    # 2. PCA.
    x = emb.astype(np.float64)
    x -= x.mean(0, keepdims=True)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    comp = vt[:a.dim]
    signs = np.sign(comp[np.arange(a.dim), np.abs(comp).argmax(1)])
    comp *= signs[:, None]
    red = x @ comp.T

    # 3. SIF weights by Zipf rank.
    rank = np.maximum(np.arange(n) - (FIRST_WORD_ID - 1), 1).astype(np.float64)
    inv = 1.0 / (rank + 1.0)
    proba = inv / inv.sum()
    red *= (a.sif / (a.sif + proba))[:, None]
    red = red.astype(np.float32)

    # 4. int8 per row.
    scale = np.abs(red).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(red / scale[:, None]), -127, 127).astype(np.int8)
    deq = q.astype(np.float32) * scale[:, None].astype(np.float32)

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "vectors.bin"), "wb") as f:
        f.write(b"MSEMBv1\x00")
        f.write(struct.pack("<II", n, a.dim))
        f.write(scale.astype("<f4").tobytes())
        f.write(q.tobytes())
    shutil.copyfile(os.path.join(a.src, "vocab.txt"), os.path.join(a.out, "vocab.txt"))

    if a.golden:
        tk = Tokenizer.from_file(os.path.join(a.src, "tokenizer.json"))
        tk.no_padding()  # tokenizer.json pads to 128
        tk.no_truncation()
        with open(os.path.join(a.golden, "fixture.txt"), encoding="utf-8") as f:
            sentences = [json.loads(line) for line in f if line.strip()]
        special = {tok[t] for t in ("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")}
        cases = []
        for s in sentences:
            ids = tk.encode(s, add_special_tokens=False).ids
            keep = [i for i in ids if i not in special]
            out = {"text": s, "ids": ids}
            for name, m in (("float", red), ("int8", deq)):
                if keep:
                    v = m[keep].mean(0)
                    v = v / max(np.linalg.norm(v), 1e-30)
                else:
                    v = np.zeros(a.dim, np.float32)
                out[name] = [round(float(t), 6) for t in v]
            # The teacher's own sentence vector (full transformer, mean pooled,
            # normalised) for the quality check in the Go tests.
            full = encode(W, np.array([[cls] + ids[:510] + [sep]])).mean(1)[0]
            out["teacher"] = [round(float(t), 6) for t in full / np.linalg.norm(full)]
            cases.append(out)
        with open(os.path.join(a.golden, "golden.json"), "w", encoding="utf-8") as f:
            json.dump(cases, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
