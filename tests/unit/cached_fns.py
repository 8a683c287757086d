"""Tiny experiment functions for the run cache's tests."""

CALLS: list[tuple] = []


def square(config: dict, seed: int) -> dict:
    CALLS.append((config["x"], seed))
    return {"value": config["x"] ** 2 + seed}


def broken(config: dict, seed: int) -> dict:
    raise ValueError(f"no data for seed {seed}")


def dies(config: dict, seed: int) -> dict:
    import os
    import time

    time.sleep(config.get("after", 0))
    os._exit(config.get("code", 3))  # the whole worker process ends, as the OOM killer would


def slow_square(config: dict, seed: int) -> dict:
    import time

    time.sleep(config.get("sleep", 0))
    return {"value": config["x"] ** 2 + seed}


def logged(config: dict, seed: int) -> dict:
    """Sleeps, writing its start and end times into config["dir"] (to see what overlaps)."""
    import json
    import time
    from pathlib import Path

    start = time.time()
    time.sleep(config["sleep"])
    record = {"x": config["x"], "start": start, "end": time.time()}
    Path(config["dir"], f"{config['x']}-{seed}.json").write_text(json.dumps(record))
    return {"value": config["x"] + seed}


def counted(config: dict, seed: int) -> dict:
    """Appends a line to config["log"] each time it is called, then raises or dies on cue:
    "raise" always raises; "die-once" ends its process the first time only."""
    import os
    from pathlib import Path

    log = Path(config["log"])
    calls = log.read_text().count("\n") if log.exists() else 0
    with log.open("a") as f:
        f.write(f"{seed}\n")
    if config["cue"] == "raise":
        raise ValueError("a bug in the training")
    if config["cue"] == "die-once" and calls == 0:
        os._exit(9)
    if config["cue"] == "die":
        os._exit(9)
    return {"value": seed}


def hangs(config: dict, seed: int) -> dict:
    """Writes its process id into config["dir"], then sleeps config["sleep"] seconds (a hung
    training run, as far as the driver can tell)."""
    import os
    import time
    from pathlib import Path

    Path(config["dir"], f"{config['x']}-{seed}.pid").write_text(str(os.getpid()))
    time.sleep(config["sleep"])
    return {"value": config["x"] + seed}
