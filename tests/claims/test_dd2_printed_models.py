"""The deep dive's printed sizes of real models, read off the reference implementations.

GPT-2 small as Hugging Face transformers builds it from its own default configuration (meta
device, nothing downloaded); each size the text prints, read at run time, is asserted
against the built model's modules.
"""

from __future__ import annotations

import re

from claimbook import claim, source_text

from experiments.printed_values import line_with
from experiments.reference_trace import gpt2_lm_meta
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
    scope="GPT-2 small as transformers builds it from its default GPT2Config (documented as "
    "openai-community/gpt2's) on the meta device, sizes read off its modules",
)
def test_gpt2_small_has_12_layers_of_12_heads_of_64(measure):
    """GPT-2 small has 12 layers of width 768, each with 12 heads of width 64."""
    text = source_text(DD2)
    header = line_with(text, "(GPT-2 Small: d_model=")
    printed = {k: int(v) for k, v in re.findall(r"(d_model|n_heads|d_head)=(\d+)", header)}
    printed["n_layers"] = int(re.findall(r"×(\d+) layers", line_with(text, "PER LAYER ("))[0])
    model = gpt2_lm_meta()
    attn = model.transformer.h[0].attn
    got = {
        "n_layers": len(model.transformer.h),
        "d_model": model.transformer.wte.embedding_dim,
        "n_heads": attn.num_heads,
        "d_head": attn.head_dim,
    }
    for name, value in got.items():
        measure(name, value, printed=printed.get(name))
    assert got == printed
