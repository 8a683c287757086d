"""No claim's numbers depend on what ran before it: a claim test that changes the process
state (threads, random streams, print options, working directory, dtype, grad mode,
environment) is named, and the next claim starts from the state the tests started from."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# loaded here, once: pytester's in-process runs unload what they import, and torch's
# deterministic-algorithms switch imports hundreds of modules that cannot load twice
torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled())

HEADER = """
import os, tempfile
import numpy as np
import torch
from claimbook import Source, claim

DOC = Source(id="doc", title="A test document", document="doc.txt")
"""

POLLUTERS = {
    "threads": "torch.set_num_threads(3)",
    "torch_seed": "torch.manual_seed(0); torch.rand(5)",
    "numpy": "np.random.seed(123); np.set_printoptions(precision=2)",
    "cwd": "os.chdir(tempfile.mkdtemp())",
    "dtype": "torch.set_default_dtype(torch.float64)",
    "grad": "torch.set_grad_enabled(False)",
    "environ": "os.environ['CLAIMBOOK_TEST_LEAK'] = '1'",
    "deterministic": "torch.use_deterministic_algorithms(True, warn_only=True)",
}

MEASURER = """
@claim(id="doc.state", level="established", source=DOC, section="1")
def test_state(measure):
    '''The state a claim test starts from.'''
    measure("threads", torch.get_num_threads())
    measure("torch draw", torch.rand(1).item())
    measure("numpy draw", float(np.random.rand()))
    measure("numpy repr", len(repr(np.array([1 / 3]))))
    measure("cwd", len(os.getcwd()))
    measure("dtype bytes", torch.zeros(1).element_size())
    measure("grad", int(torch.is_grad_enabled()))
    measure("environ", int("CLAIMBOOK_TEST_LEAK" in os.environ))
    measure("deterministic", int(torch.are_deterministic_algorithms_enabled()))
"""


def _polluter(name: str) -> str:
    return f"""
@claim(id="doc.{name.replace("_", "-")}", level="established", source=DOC, section="1")
def test_{name}(measure):
    '''A claim test that changes the process state.'''
    {POLLUTERS[name]}
    measure("done", 1)
"""


def _state(pytester, names: list[str]) -> tuple[dict, str]:
    body = HEADER + "".join(_polluter(n) if n != "state" else MEASURER for n in names)
    pytester.makepyfile(test_claims=body)
    result = pytester.runpytest("-p", "no:cacheprovider", "--claimbook-no-cache")
    files = sorted(Path(pytester.path, "reports", "results").glob("run-*.json"))
    data = json.loads(files[-1].read_text())
    claim = next(c for c in data["claims"] if c["id"] == "doc.state")
    values = {m["name"]: m["value"] for m in claim["instances"][0]["measures"]}
    return values, "\n".join(result.outlines)


def test_each_change_is_named_and_undone(pytester):
    alone, _ = _state(pytester, ["state"])
    after, output = _state(pytester, [*POLLUTERS, "state"])
    assert after == alone
    for name in POLLUTERS:  # a seeded stream is seeded again, unnamed: seeding is no fault
        named = f"test_claims.py::test_{name}" in output
        assert named == (name != "torch_seed"), name
    assert "torch threads" in output and "numpy print options" in output
    assert "test_claims.py::test_state" not in output  # drawing random numbers is no fault
    assert "1 claim tests changed the process state (torch threads)" in output


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(sorted(POLLUTERS)), max_size=5, unique=True), st.integers(0, 5))
def test_no_order_or_selection_changes_a_measured_value(pytester, before, where):
    """The property: whatever runs before it, in any order, the measurer reads one state."""
    names = [*before]
    names.insert(min(where, len(names)), "state")
    alone, _ = _state(pytester, ["state"])
    assert _state(pytester, names)[0] == alone


SEEDED = '''
import random
import numpy as np
import torch
from claimbook import Source, claim

DOC = Source(id="doc", title="A test document", document="doc.txt")

@claim(id="doc.draws", level="established", source=DOC, section="1")
def test_draws(seed, measure):
    """Unseeded draws from the global streams."""
    measure("torch", torch.rand(1).item())
    measure("numpy", float(np.random.rand()))
    measure("python", random.random())
'''


def test_unseeded_global_draws_are_the_same_in_every_run_for_one_seed(pytester):
    """A fresh process draws its first torch and NumPy states afresh: the plugin seeds every
    global stream from the instance's seed, so two runs give one set of numbers."""
    runs = []
    for _ in range(2):
        pytester.makepyfile(test_claims=SEEDED)
        pytester.runpytest_subprocess("-p", "no:cacheprovider", "--claimbook-no-cache")
        files = sorted(Path(pytester.path, "reports", "results").glob("run-*.json"))
        claim = json.loads(files[-1].read_text())["claims"][0]
        runs.append({i["seed"]: [m["value"] for m in i["measures"]] for i in claim["instances"]})
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1]  # each seed its own numbers
