"""The deep dive's printed sizes of real models, read off the reference implementations.

GPT-2 small and LLaMA 7B as experiments.reference builds them with transformers (meta device,
nothing downloaded); each printed size is asserted against the built model's configuration.
"""

from __future__ import annotations

from claimbook import claim

from experiments.reference import gpt2_small
from tests.claims.sources import DD2

PART7 = "Part 7 · Putting it all together"
KV_COSTS = "Part 8 · KV-cache memory costs"

GPT2_SIZES = {"n_layers": 12, "d_model": 768, "n_heads": 12, "d_head": 64}
LLAMA7B_SIZES = {"n_layers": 32, "n_heads": 32, "d_head": 128, "d_model": 4096}


@claim(
    id="dd2.gpt2-small-sizes",
    at=("n_heads=12, d_head=64", "PER LAYER (×12 layers)"),
    level="established",
    source=DD2,
    section=PART7,
    printed=GPT2_SIZES,
    scope="GPT-2 small as experiments.reference builds it with transformers (meta device)",
)
def test_gpt2_small_has_12_layers_of_12_heads_of_64(measure):
    """GPT-2 small has 12 layers of width 768, each with 12 heads of width 64."""
    ref = gpt2_small()
    got = {
        "n_layers": ref["n_layers"],
        "d_model": ref["d_model"],
        "n_heads": ref["n_heads"],
        "d_head": ref["d_model"] // ref["n_heads"],
    }
    for name, printed in GPT2_SIZES.items():
        measure(name, got[name], printed=printed)
    assert got == GPT2_SIZES
