"""A deliberately broken experiment must turn its claims refuted and the gate red.

The bug is a monkeypatch made by a throwaway plugin in the test's own folder,
never shipped; no line of the gate knows about it.
"""

from __future__ import annotations

import json
from pathlib import Path

CLAIMS = Path(__file__).resolve().parents[1] / "claims" / "test_ch04_token_mixing.py"

PEEK_FUTURE = """
import torch.nn.functional as F
from experiments.modules import CausalConv


def forward(self, x):  # shifted to see one future token and one fewer past token
    x = F.pad(x.transpose(1, 2), (self.pad - 1, 1))
    return self.conv(x).transpose(1, 2)


def pytest_configure(config):
    CausalConv.forward = forward
"""


def run_reach_claims(pytester, tmp_path, *plugins):
    result = pytester.runpytest_subprocess(
        str(CLAIMS),
        "-k",
        "conv_reach or kernel3",
        "--seeds",
        "0",
        "--results-dir",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
        *plugins,
    )
    (results,) = tmp_path.glob("run-*.json")
    return result, {c["id"]: c["verdict"] for c in json.loads(results.read_text())["claims"]}


def test_a_convolution_that_sees_the_future_is_caught(pytester, tmp_path):
    pytester.makepyfile(peek_future=PEEK_FUTURE)
    result, verdicts = run_reach_claims(pytester, tmp_path, "-p", "peek_future")
    assert result.ret == 1
    assert verdicts == {"ch04.conv-reach": "refuted", "ch04.conv-reach-quiz": "refuted"}
    result.stdout.fnmatch_lines(
        ["*GATE FAILED: ch04.conv-reach (refuted), ch04.conv-reach-quiz (refuted)*"]
    )


def test_the_unbroken_convolution_passes(pytester, tmp_path):
    result, verdicts = run_reach_claims(pytester, tmp_path)
    assert result.ret == 0
    assert verdicts == {"ch04.conv-reach": "holds", "ch04.conv-reach-quiz": "holds"}
