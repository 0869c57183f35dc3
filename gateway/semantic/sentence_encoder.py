"""A BERT sentence encoder in numpy: all-MiniLM-L6-v2 without torch.

It computes what sentence-transformers computes for this model (modules.json: Transformer, mean Pooling,
Normalize) from the same files: the weights from model.safetensors, the tokens from tokenizer.json with
sentence-transformers' truncation (``max_seq_length``, 256) and padding to the batch's longest text.
Measured against sentence-transformers on the semantic benches' texts (docs/benchmarks/semantic-cache.md):
cosine > 0.99999 per text and identical verdicts. Torch, a multi-GB install, is not needed to serve it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

# Abramowitz & Stegun 7.1.26: erf within 1.5e-7, below float32's resolution at these magnitudes (numpy
# has no erf, and BERT's GELU is the exact, erf-based one: the tanh form is off by ~1e-3).
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def _gelu(x: np.ndarray) -> np.ndarray:
    """x * Phi(x) with erf from A&S 7.1.26, in place on temporaries: this is ~1/3 of the encoder's time."""
    z = x * np.float32(0.7071067811865476)
    sign = np.sign(z)
    np.abs(z, out=z)
    t = z * _ERF_P
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * _ERF_A[0]
    for a in _ERF_A[1:]:
        poly += a
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # 1 - erf(|x| / sqrt 2)
    np.subtract(1.0, poly, out=poly)
    poly *= sign
    poly += 1.0
    poly *= x
    poly *= 0.5
    return poly


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + np.float32(eps)) * weight + bias


@dataclass(frozen=True)
class _Layer:
    qkv: np.ndarray  # (hidden, 3 * hidden): query, key and value projections in one matmul
    qkv_bias: np.ndarray
    attention_out: np.ndarray
    attention_out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    intermediate: np.ndarray
    intermediate_bias: np.ndarray
    output: np.ndarray
    output_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]


class SentenceEncoder:
    """A sentence-transformers folder (BERT, mean pooling, normalised) encoded with numpy."""

    def __init__(self, model_dir: str | Path) -> None:
        folder = Path(model_dir)
        config = json.loads((folder / "config.json").read_text())
        self._check_architecture(folder, config)
        self.dimension = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config["layer_norm_eps"])
        self.max_seq_length = int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The file pads every text to 128 and truncates there; sentence-transformers pads to the batch's
        # longest and truncates at max_seq_length: the latter decides the vectors, so it is what we use.
        self.tokenizer.enable_truncation(self.max_seq_length)
        self.tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)))
        weights = load_file(str(folder / "model.safetensors"))
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        w = {name.removeprefix(prefix): value.astype(np.float32) for name, value in weights.items()}
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._token_type = w["embeddings.token_type_embeddings.weight"][0]
        self._embedding_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))]

    @staticmethod
    def _check_architecture(folder: Path, config: dict[str, object]) -> None:
        """Refuse a model this encoder would get silently wrong (another architecture or pooling)."""
        pooling_file = folder / "1_Pooling" / "config.json"
        pooling = json.loads(pooling_file.read_text()) if pooling_file.exists() else {}
        modules = json.loads((folder / "modules.json").read_text()) if (folder / "modules.json").exists() else []
        problems = []
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            problems.append(f"model_type={config.get('model_type')!r}, hidden_act={config.get('hidden_act')!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            problems.append(f"position_embedding_type={config.get('position_embedding_type')!r}")
        modes = {key for key, value in pooling.items() if key.startswith("pooling_mode_") and value}
        if modes != {"pooling_mode_mean_tokens"}:
            problems.append("pooling is not mean-only")
        if not any(str(m.get("type", "")).endswith("Normalize") for m in modules):
            problems.append("no Normalize module")
        if problems:
            raise ValueError(f"{folder}: not a BERT mean-pooled, normalised sentence model ({'; '.join(problems)})")

    @staticmethod
    def _layer(w: dict[str, np.ndarray], p: str) -> _Layer:
        projections = [w[f"{p}attention.self.{name}.weight"].T for name in ("query", "key", "value")]
        return _Layer(
            qkv=np.ascontiguousarray(np.concatenate(projections, axis=1)),
            qkv_bias=np.concatenate([w[f"{p}attention.self.{name}.bias"] for name in ("query", "key", "value")]),
            attention_out=np.ascontiguousarray(w[f"{p}attention.output.dense.weight"].T),
            attention_out_bias=w[f"{p}attention.output.dense.bias"],
            attention_norm=(w[f"{p}attention.output.LayerNorm.weight"], w[f"{p}attention.output.LayerNorm.bias"]),
            intermediate=np.ascontiguousarray(w[f"{p}intermediate.dense.weight"].T),
            intermediate_bias=w[f"{p}intermediate.dense.bias"],
            output=np.ascontiguousarray(w[f"{p}output.dense.weight"].T),
            output_bias=w[f"{p}output.dense.bias"],
            output_norm=(w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"]),
        )

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """L2-normalised float32 rows, one per text, in the order given.

        Texts are encoded longest first in batches of ``batch_size`` (as sentence-transformers does), so a
        batch pads to a length close to each of its texts.
        """
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            vectors[chosen] = self._encode_batch([texts[i] for i in chosen])
        return vectors

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        batch, length = ids.shape
        # Rows are (text, position) flattened: each dense layer is then one matrix product, not one per text.
        hidden = (self._word[ids] + self._position[:length] + self._token_type).reshape(batch * length, -1)
        hidden = _layer_norm(hidden, *self._embedding_norm, self._eps)
        # Padding keys get the most negative float added, as in transformers: their softmax weight is 0.
        key_bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in self._layers:
            hidden = self._run_layer(layer, hidden, key_bias, batch, length)
        # Mean pooling over the real tokens, then L2 normalisation (sentence-transformers' Pooling, Normalize).
        summed = np.einsum("bld,bl->bd", hidden.reshape(batch, length, -1), mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def _run_layer(
        self, layer: _Layer, hidden: np.ndarray, key_bias: np.ndarray, batch: int, length: int
    ) -> np.ndarray:
        head_dim = self.dimension // self._heads
        qkv = hidden @ layer.qkv + layer.qkv_bias  # (batch * length, 3 * hidden)
        qkv = qkv.reshape(batch, length, 3, self._heads, head_dim).transpose(2, 0, 3, 1, 4)
        query, key, value = qkv[0], qkv[1], qkv[2]  # each (batch, heads, length, head_dim)
        scores = (query @ key.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(head_dim)) + key_bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * length, self.dimension)
        attended = context @ layer.attention_out + layer.attention_out_bias
        hidden = _layer_norm(attended + hidden, *layer.attention_norm, self._eps)
        inner = _gelu(hidden @ layer.intermediate + layer.intermediate_bias)
        return _layer_norm(inner @ layer.output + layer.output_bias + hidden, *layer.output_norm, self._eps)
