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
