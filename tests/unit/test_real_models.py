"""The reference configurations of named models: written out, never a class's defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments import real_models

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


@pytest.mark.parametrize("key", list(real_models.CHECKPOINTS))
def test_each_checkpoint_config_holds_the_sizes_written_for_it(key):
    cfg = real_models.config_of(key)
    _, _, sizes = real_models.CHECKPOINTS[key]
    for name, value in sizes.items():
        if not name.startswith("rope"):  # transformers 5 folds rope settings into one dict
            assert getattr(cfg, name) == value, (key, name)
    assert real_models.named(key).startswith(real_models.CHECKPOINTS[key][0])


def test_no_model_is_built_from_a_default_configuration():
    bare = re.compile(r"\b\w+Config\(\)")
    for name in ("reference.py", "real_models.py", "real_others.py"):
        assert not bare.search((EXPERIMENTS / name).read_text()), name


def test_the_named_gqa_checkpoints_differ_from_llama_7b():
    sizes = {k: real_models.CHECKPOINTS[k][2] for k in ("llama-7b", "llama2-70b", "llama3-8b")}
    assert sizes["llama-7b"]["num_key_value_heads"] == sizes["llama-7b"]["num_attention_heads"]
    assert (
        sizes["llama2-70b"]["num_key_value_heads"] == 8 == sizes["llama3-8b"]["num_key_value_heads"]
    )
