"""The gate's own test: deliberate bugs in experiments/ must turn their claims red.

Each bug is a monkeypatch made by a throwaway plugin in the test's own folder,
never shipped; no line of claimbook knows about it. The claims run for real on
seed 0 and are compared with the committed baseline, so a caught bug exits
non-zero naming the claim and the rule. Harmless refactors must leave them green.
Only claims that need no training run here (a training claim would retrain for
minutes); ``bugs caught by which claims`` is the table these cases spell out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = Path(__file__).resolve().parents[1] / "claims"
CH04, DD2 = CLAIMS / "test_ch04_token_mixing.py", CLAIMS / "test_dd2_attention_deep_dive.py"

BUGS = {
    "a convolution that sees one future token": (
        """
from experiments.modules import CausalConv

def forward(self, x):
    x = F.pad(x.transpose(1, 2), (self.pad - 1, 1))  # one step too far right
    return self.conv(x).transpose(1, 2)

CausalConv.forward = forward
""",
        [CH04],
        "conv_reach or kernel3 or 13_characters",
        {"ch04.conv-reach", "ch04.conv-reach-quiz", "ch04.lm-conv-reach"},
    ),
    "attention without its causal mask": (
        """
from experiments.modules import Attention

def forward(self, x):
    B, T, C = x.shape
    q, (k, v) = self.queries(x), self.keys_values(x)
    share = self.n_heads // self.n_kv_heads
    k, v = k.repeat_interleave(share, dim=1), v.repeat_interleave(share, dim=1)
    y = F.scaled_dot_product_attention(q, k, v)  # is_causal forgotten
    return self.out(y.transpose(1, 2).reshape(B, T, C))

Attention.forward = forward
""",
        [DD2],
        "causal_mask",
        {"dd2.causal-mask"},
    ),
    "a KV cache that keeps only the newest token": (
        """
from experiments.gpt2 import KVCache

def append(self, layer, k, v):
    self.layers[layer] = (k, v)  # the past is dropped instead of extended
    return k, v

KVCache.append = append
""",
        [DD2],
        "kv_cache_decoding or per_token_work",
        {"dd2.kv-cache-equivalence", "dd2.kv-cache-linear"},
    ),
    "an online softmax that never updates its running maximum": (
        """
import experiments.tiled as tiled

def online_normaliser(scores, chunk):
    m = scores[..., :chunk].amax(-1)  # the first chunk's maximum, kept for the whole row
    return m, torch.exp(scores - m[..., None]).sum(-1)

tiled.online_normaliser = online_normaliser
""",
        [DD2],
        "online_softmax",
        {"dd2.online-softmax"},
    ),
    "tiled attention that forgets to rescale its accumulator": (
        """
import math
import experiments.tiled as tiled

def tiled_attention(q, k, v, block=128, causal=True):
    n, scale, outputs = q.shape[-2], 1 / math.sqrt(q.shape[-1]), []
    for i in range(0, n, block):
        q_i = q[..., i : i + block, :]
        rows = q_i.shape[-2]
        m = torch.full((*q_i.shape[:-1], 1), float("-inf"), dtype=q.dtype)
        total, acc = torch.zeros_like(m), torch.zeros_like(q_i)
        for j in range(0, i + rows if causal else n, block):
            s = q_i @ k[..., j : j + block, :].transpose(-2, -1) * scale
            if causal and j + block > i:
                keys, queries = torch.arange(j, j + s.shape[-1]), torch.arange(i, i + rows)
                future = keys[None, :] > queries[:, None]
                s = s.masked_fill(future, float("-inf"))
            new_m = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - new_m)
            acc = acc + p @ v[..., j : j + block, :]  # old blocks keep their old maximum
            total = total + p.sum(-1, keepdim=True)
            m = new_m
        outputs.append(acc / total)
    return torch.cat(outputs, dim=-2)

tiled.tiled_attention = tiled_attention
""",
        [DD2],
        "tiled_attention_equals",
        {"dd2.flash-equivalence"},
    ),
    "KV-cache bytes that count the keys only": (
        """
import experiments.kv_cache as kv_cache

measured = kv_cache.measured_kv_bytes
kv_cache.measured_kv_bytes = lambda *args, **kwargs: measured(*args, **kwargs) // 2
""",
        [CH04, DD2],
        # ch04.kv-bytes-small measures the chapter's model as built (experiments.lm_kv_cache),
        # not through this function: it is selected and stays green
        "kv_cache_bytes or halves or llama7b or divides_the_cache",
        {"dd2.kv-llama7b", "dd2.gqa-reduction"},
    ),
    "RoPE with one sign flipped": (
        """
import experiments.modules as modules

def apply_rope(x):
    seq, dim = x.shape[-2], x.shape[-1]
    half = dim // 2
    freqs = 10000 ** (-torch.arange(half, dtype=torch.float32) / half)
    angles = torch.arange(seq, dtype=torch.float32)[:, None] * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos + x2 * sin, x1 * sin + x2 * cos], dim=-1)  # not a rotation

modules.apply_rope = apply_rope
""",
        [CH04],
        "rope_scores",
        {"ch04.rope-relative"},
    ),
    "a local window one position short": (
        """
import experiments.local as local

def window_mask(n, before, after=0):
    offset = torch.arange(n)[:, None] - torch.arange(n)[None, :]
    return (offset < before) & (offset >= -after)

local.window_mask = window_mask
""",
        [DD2],
        "local_attention",
        {"dd2.sparse-local"},
    ),
    "a GPT-2 whose MLP lost its biases": (
        """
from torch import nn
from experiments.gpt2 import Block

build = Block.__init__

def __init__(self, cfg):
    build(self, cfg)
    self.mlp = nn.Sequential(
        nn.Linear(cfg.d_model, cfg.d_ff, bias=False), nn.GELU(),
        nn.Linear(cfg.d_ff, cfg.d_model, bias=False),
    )

Block.__init__ = __init__
""",
        [DD2],
        "parameter_breakdown",
        {"dd2.gpt2-params"},
    ),
}

HARMLESS = {
    "the convolution refactored to pad inside conv1d": (
        """
from experiments.modules import CausalConv

def forward(self, x):
    y = F.conv1d(x.transpose(1, 2), self.conv.weight, padding=self.pad, dilation=self.conv.dilation)
    return y[..., : x.shape[1]].transpose(1, 2)  # drop the right padding's outputs

CausalConv.forward = forward
""",
        [CH04],
        "conv_reach or kernel3 or 13_characters",
    ),
    "standard attention through torch's fused kernel": (
        """
import experiments.tiled as tiled

tiled.standard_attention = lambda q, k, v, causal=True: F.scaled_dot_product_attention(
    q, k, v, is_causal=causal
)
""",
        [DD2],
        "tiled_attention_equals",
    ),
}

# the plugin is imported at start-up, so its patch is in place before any claim module loads
PLUGIN_HEADER = """
import torch
import torch.nn.functional as F
"""


@pytest.fixture(autouse=True)
def separate_claim_store(tmp_path, monkeypatch):
    """A cache of its own for each deliberate run, sharing only the trained runs.

    A patched plugin changes nothing the claim cache's keys see, so the real store
    would replay the unpatched outcomes, and the patched ones would be stored there.
    """
    real = Path(os.environ.get("CLAIMBOOK_CACHE_DIR") or ROOT / ".claimbook-cache")
    cache = tmp_path / "cache"
    cache.mkdir()
    for folder in real.glob("train_*"):
        (cache / folder.name).symlink_to(folder.resolve())
    monkeypatch.setenv("CLAIMBOOK_CACHE_DIR", str(cache))
    # the book is not installed: its experiments/ are imported from the checkout (as pytest
    # does for the claim tests; the patch plugin is loaded before any test is collected)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


def run_claims(pytester, tmp_path, files, keyword, patch=None):
    args = [str(f) for f in files] + [
        "-k",
        keyword,
        "--claimbook-seeds",
        "0",
        "-p",
        "no:cacheprovider",
    ]
    args += [
        "--claimbook-results-dir",
        str(tmp_path / "results"),
        "--claimbook-history",
        str(tmp_path / "h.sqlite"),
    ]
    if patch is not None:
        pytester.makepyfile(deliberate_change=PLUGIN_HEADER + patch)
        args += ["-p", "deliberate_change"]
    result = pytester.runpytest_subprocess(*args)
    (results,) = (tmp_path / "results").glob("run-*.json")
    return result, json.loads(results.read_text())


@pytest.mark.parametrize("bug", list(BUGS))
def test_a_deliberate_bug_is_caught_by_its_claims(bug, pytester, tmp_path):
    patch, files, keyword, expected = BUGS[bug]
    result, data = run_claims(pytester, tmp_path, files, keyword, patch)
    assert result.ret == 1, result.stdout.str()
    refuted = {c["id"] for c in data["claims"] if c["verdict"] == "refuted"}
    assert refuted == expected
    regressions = data["comparison"]["regressions"]
    # every caught claim is a verdict-worse regression (printed-lost may fire beside it)
    assert {r["claim"] for r in regressions if r["rule"] == "verdict-worse"} == expected
    assert {r["claim"] for r in regressions} == expected
    for claim_id in expected:
        result.stdout.fnmatch_lines([f"{claim_id}*verdict-worse*"])


@pytest.mark.parametrize("change", list(HARMLESS))
def test_a_harmless_refactor_stays_green(change, pytester, tmp_path):
    patch, files, keyword = HARMLESS[change]
    result, data = run_claims(pytester, tmp_path, files, keyword, patch)
    assert result.ret == 0, result.stdout.str()
    assert data["comparison"]["regressions"] == []
    assert all(c["verdict"] == "holds" for c in data["claims"])
    result.stdout.fnmatch_lines(["*no regression against the baseline*"])
