"""TinyShakespeare: locating the corpus, the character tokenizer, and batches.

The corpus (karpathy/char-rnn, 1,115,394 characters) is looked for in order:
``$CLAIMBOOK_DATA_DIR/tinyshakespeare/input.txt``, then the user cache
(``$XDG_CACHE_HOME/claimbook`` or ``~/.cache/claimbook``), then downloaded once
from its canonical URL into the cache. Every copy is checked against its sha256.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import torch

CORPUS_URL = (
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)
CORPUS_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
CORPUS_RELPATH = Path("tinyshakespeare") / "input.txt"
DATA_DIR_VAR = "CLAIMBOOK_DATA_DIR"


class CorpusNotFoundError(FileNotFoundError):
    """No verified copy of the corpus could be found or downloaded."""


def user_cache_dir() -> Path:
    """The per-user cache directory of claimbook (not the project's run cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "claimbook"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(url: str, dest: Path) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        data = response.read()
    if _sha256(data) != CORPUS_SHA256:
        raise ValueError(f"downloaded {url} but its sha256 is {_sha256(data)}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, delete=False) as tmp:
        tmp.write(data)
    os.replace(tmp.name, dest)
    return data


def corpus_text(download: bool = True) -> str:
    """Return the TinyShakespeare text, verified against its sha256.

    Raises:
        CorpusNotFoundError: when neither ``$CLAIMBOOK_DATA_DIR``, nor the user
            cache, nor the download gives a verified copy; the message names
            every place looked and why each failed.
    """
    tried: list[str] = []
    data_dir = os.environ.get(DATA_DIR_VAR)
    candidates = []
    if data_dir:
        candidates.append(Path(data_dir) / CORPUS_RELPATH)
    else:
        tried.append(f"${DATA_DIR_VAR}: not set")
    cached = user_cache_dir() / CORPUS_RELPATH
    candidates.append(cached)
    for path in candidates:
        if not path.is_file():
            tried.append(f"{path}: no such file")
            continue
        data = path.read_bytes()
        if _sha256(data) == CORPUS_SHA256:
            return data.decode("ascii")
        tried.append(f"{path}: sha256 mismatch ({_sha256(data)[:12]}...)")
    if download:
        try:
            return _download(CORPUS_URL, cached).decode("ascii")
        except Exception as exc:  # any network or checksum failure is reported below
            tried.append(f"{CORPUS_URL}: download failed ({exc})")
    else:
        tried.append(f"{CORPUS_URL}: download not attempted")
    raise CorpusNotFoundError(
        "TinyShakespeare not found. Looked in:\n  - "
        + "\n  - ".join(tried)
        + f"\nSet ${DATA_DIR_VAR} to a folder holding {CORPUS_RELPATH} "
        f"(sha256 {CORPUS_SHA256})."
    )


def run_inputs() -> dict[str, str]:
    """The corpus a training run reads, as {path under the data dir: sha256 of its bytes}.

    The run cache puts this in the key of every run whose code imports this module.

    Raises:
        CorpusNotFoundError: as :func:`corpus_text`.
    """
    return {str(CORPUS_RELPATH): _sha256(corpus_text().encode("ascii"))}


@dataclass(frozen=True)
class CharCorpus:
    """A character-level corpus: vocabulary and the 90/10 train/validation split.

    Attributes:
        chars: the sorted distinct characters; a token id is an index into it.
        train: (N_train,) int64 token ids, the first int(0.9 N) characters.
        val: (N_val,) int64 token ids, the rest.
    """

    chars: str
    train: torch.Tensor
    val: torch.Tensor

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        index = {c: i for i, c in enumerate(self.chars)}
        return torch.tensor([index[c] for c in text], dtype=torch.long)

    def decode(self, ids: torch.Tensor) -> str:
        return "".join(self.chars[i] for i in ids.tolist())


@functools.cache
def shakespeare() -> CharCorpus:
    """TinyShakespeare as a :class:`CharCorpus` (65 symbols); loaded once per process."""
    text = corpus_text()
    chars = "".join(sorted(set(text)))
    index = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(ids))
    return CharCorpus(chars=chars, train=ids[:split], val=ids[split:])


def get_batch(
    ids: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``batch_size`` random windows of ``block_size`` tokens.

    Returns inputs and next-token targets, each (batch_size, block_size) int64.
    Start positions come from ``randint(len(ids) - block_size - 1)`` on
    ``generator``, as in the chapter's protocol.
    """
    starts = torch.randint(len(ids) - block_size - 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s : s + block_size] for s in starts.tolist()])
    y = torch.stack([ids[s + 1 : s + block_size + 1] for s in starts.tolist()])
    return x, y
