"""nox -s claims: the little book's claims over seeds, its site, and the gate.

It runs in the book's environment: the ``python`` on PATH, where claimbook, mkdocs-material
and numpy are installed (nox itself may come from anywhere: that environment, pipx,
pyenv). The first run accepts a baseline:

    python -m pytest --claimbook-update-baseline
    nox -s claims
"""

import shutil
import tempfile

import nox

nox.options.sessions = ["claims"]
PROBE = "import importlib.util, sys; print(importlib.util.find_spec('claimbook') is not None)"
PROBE += "; print(sys.executable)"


def require_claimbook(session: nox.Session) -> None:
    """Stop unless the ``python`` on PATH (the one every step runs) imports claimbook."""
    if shutil.which("python") is None:
        session.error("no `python` on PATH: activate the book's environment, then run nox")
    found, where = session.run("python", "-c", PROBE, silent=True).strip().split("\n", 1)
    if found != "True":
        session.error(
            f"claimbook is not installed in {where} (the `python` on PATH, which this session"
            f" runs): activate the book's environment, or `{where} -m pip install"
            " ../../framework`"
        )


@nox.session(venv_backend="none")
def claims(session: nox.Session) -> None:
    """The claims over seeds (against the baseline), the gate, render, mkdocs --strict."""
    require_claimbook(session)
    args = session.posargs
    if any(arg.startswith(("--claimbook-train-part", "--claimbook-shard")) for arg in args):
        # a training leg or a shard: its exit status is its gate, and it builds no site
        session.run("python", "-m", "pytest", *args)
        return
    # a folder of this invocation's own: two sessions at once never share a receipt
    receipt = f"{tempfile.mkdtemp(prefix='claimbook-run-', dir=session.create_tmp())}/receipt.json"
    # 1 means "the run failed": the gate says why, and the site is still built
    session.run(
        "python", "-m", "pytest", "--claimbook-require-baseline", f"--claimbook-receipt={receipt}",
        *args,
        success_codes=[0, 1],
    )  # fmt: skip
    try:  # the gate decides; the site, built whatever it decided, shows its decision
        session.run("python", "-m", "claimbook", "gate", "--receipt", receipt)
    finally:
        session.run("python", "-m", "claimbook", "site")  # render + mkdocs, unless unchanged
