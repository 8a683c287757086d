"""Tiny experiment functions for the run cache's tests."""

CALLS: list[tuple] = []


def square(config: dict, seed: int) -> dict:
    CALLS.append((config["x"], seed))
    return {"value": config["x"] ** 2 + seed}


def broken(config: dict, seed: int) -> dict:
    raise ValueError(f"no data for seed {seed}")
