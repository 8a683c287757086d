import hashlib
import os

import pytest

from experiments import data
from experiments.data import CORPUS_SHA256, CorpusNotFoundError, corpus_text, get_batch, shakespeare

needs_corpus = pytest.mark.skipif(
    not os.environ.get("CLAIMBOOK_DATA_DIR"), reason="CLAIMBOOK_DATA_DIR is not set"
)


def test_missing_corpus_names_every_place_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(data, "CORPUS_URL", "http://127.0.0.1:9/input.txt")  # a closed local port
    with pytest.raises(CorpusNotFoundError) as err:
        corpus_text()
    message = str(err.value)
    assert str(tmp_path / "data" / "tinyshakespeare" / "input.txt") in message
    assert str(tmp_path / "cache" / "claimbook" / "tinyshakespeare" / "input.txt") in message
    assert "http://127.0.0.1:9/input.txt: download failed" in message
    assert "CLAIMBOOK_DATA_DIR" in message


def test_a_corrupted_copy_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "tinyshakespeare" / "input.txt"
    bad.parent.mkdir()
    bad.write_text("To be, or not to be\n")
    monkeypatch.setenv("CLAIMBOOK_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(CorpusNotFoundError, match="sha256 mismatch"):
        corpus_text(download=False)


@needs_corpus
def test_the_real_corpus():
    text = corpus_text(download=False)
    assert len(text) == 1_115_394
    assert hashlib.sha256(text.encode()).hexdigest() == CORPUS_SHA256
    corpus = shakespeare()
    assert corpus.vocab_size == 65
    assert len(corpus.train) == int(0.9 * len(text))
    assert len(corpus.train) + len(corpus.val) == len(text)
    assert corpus.decode(corpus.train[:14]) == text[:14]


def test_batches_are_next_token_windows():
    import torch

    ids = torch.arange(100)
    x, y = get_batch(ids, 4, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8)
    assert torch.equal(y, x + 1)
