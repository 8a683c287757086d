"""An experiment whose data file is missing, for the run cache's tests."""


def run_inputs() -> dict[str, str]:
    raise FileNotFoundError("data.txt: looked in /nowhere and /nowhere/else")


def train(config: dict, seed: int) -> dict:
    return {"value": seed}
