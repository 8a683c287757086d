"""nox -s claims: the little book's claims over seeds, its site, and the gate.

It runs in the environment nox itself runs in (venv_backend="none"), where claimbook,
mkdocs-material and nox are installed; the first run accepts a baseline:

    python -m pytest --claimbook-update-baseline
    nox -s claims
"""

import nox

nox.options.sessions = ["claims"]


@nox.session(venv_backend="none")
def claims(session: nox.Session) -> None:
    args = session.posargs
    if any(arg.startswith(("--claimbook-train-part", "--claimbook-shard")) for arg in args):
        # a training leg or a shard: its exit status is its gate, and it builds no site
        session.run("python", "-m", "pytest", *args)
        return
    receipt = f"{session.create_tmp()}/receipt.json"
    # 1 means "the run failed": the site is still built, then the gate says why
    session.run(
        "python", "-m", "pytest", "--claimbook-require-baseline", f"--claimbook-receipt={receipt}",
        *args,
        success_codes=[0, 1],
    )  # fmt: skip
    session.run("python", "-m", "claimbook", "render")
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})
    session.run("python", "-m", "claimbook", "gate", "--receipt", receipt)
