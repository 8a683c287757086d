"""nox -s claims: the claims over seeds, the site, and the gate (in this environment, where
claimbook is installed)."""

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
        "python", "-m", "pytest", f"--claimbook-receipt={receipt}", *args,
        success_codes=[0, 1],
    )  # fmt: skip
    session.run("python", "-m", "claimbook", "render")
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})
    session.run("python", "-m", "claimbook", "gate", "--receipt", receipt)
