"""The semantic tier's numpy encoder: sentence-transformers' vectors without torch.

The fixture holds sentence-transformers' own vectors (torch) for texts from the semantic benches whose
pair cosine sits nearest the gateway's threshold, plus edge cases (empty, non-ASCII, past the 256-token
truncation): python -m bench.embedding_runtime OUT --fixture tests/semantic/data/minilm_reference.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.semantic.embedder import Embedder, default_model_path
from gateway.semantic.sentence_encoder import SentenceEncoder

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())
# Measured over 2,260 of the benches' texts (150 pairs per set): the worst text's cosine to
# sentence-transformers' vector is 1 - 1e-7 and no element differs by more than ~1e-6
# (docs/benchmarks/semantic-cache.md); the fixture's values are rounded to 6 decimals.
MIN_COSINE = 0.99999
MAX_ABS_DIFFERENCE = 2e-5


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    model = Embedder()
    model.load()
    return model


@pytest.fixture(scope="module")
def got(embedder: Embedder) -> np.ndarray:
    return embedder.embed_many(REFERENCE["texts"])


def test_vectors_match_sentence_transformers(got: np.ndarray) -> None:
    expected = np.array(REFERENCE["vectors"], dtype=np.float32)
    cosines = np.einsum("ij,ij->i", got, expected) / np.linalg.norm(expected, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines[worst] > MIN_COSINE, f"{REFERENCE['texts'][worst][:60]!r}: cosine {cosines[worst]}"
    assert np.abs(got - expected).max() < MAX_ABS_DIFFERENCE


def test_pair_cosines_match_near_the_threshold(got: np.ndarray) -> None:
    """The verdicts depend on pair cosines: compare them, not just the vectors."""
    expected = np.array(REFERENCE["vectors"], dtype=np.float32)
    assert np.abs(got @ got.T - expected @ expected.T).max() < MAX_ABS_DIFFERENCE


def test_batching_and_order_do_not_change_a_vector(embedder: Embedder) -> None:
    """Texts are sorted by length and padded per batch: a text's vector must not depend on its batch."""
    texts = REFERENCE["texts"]
    together = embedder.embed_many(texts, batch_size=7)
    alone = np.concatenate([embedder.embed_many([t]) for t in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_a_model_it_would_get_wrong_is_refused(tmp_path: Path) -> None:
    source = Path(default_model_path())
    for name in ("config.json", "modules.json", "sentence_bert_config.json"):
        (tmp_path / name).write_text((source / name).read_text())
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    with pytest.raises(ValueError, match="pooling is not mean-only"):
        SentenceEncoder(tmp_path)


def test_the_semantic_tier_never_imports_torch() -> None:
    """Embedding through the gateway's semantic tier loads neither torch nor sentence-transformers."""
    script = (
        "import asyncio, sys\n"
        "import gateway.response_cache.cache\n"
        "from gateway.semantic.embedder import Embedder\n"
        "async def main():\n"
        "    embedder = Embedder()\n"
        "    await embedder.warmup()\n"
        "    vector = await embedder.embed('is torch loaded?')\n"
        "    await embedder.aclose()\n"
        "    assert vector.shape == (384,)\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
