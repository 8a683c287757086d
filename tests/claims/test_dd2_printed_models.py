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


def printed_sizes(text: str) -> dict[str, int]:
    """GPT-2 small's sizes as the text prints them: its header line and "×12 layers"."""
    header = line_with(text, "(GPT-2 Small: d_model=")
    sizes = {k: int(v) for k, v in re.findall(r"(d_model|n_heads|d_head)=(\d+)", header)}
    sizes["n_layers"] = int(re.findall(r"×(\d+) layers", line_with(text, "PER LAYER ("))[0])
    return sizes


def built_sizes() -> dict[str, int]:
    """GPT-2 small's sizes read off the modules transformers builds (meta device)."""
    model = gpt2_lm_meta()
    attn = model.transformer.h[0].attn
    return {
        "n_layers": len(model.transformer.h),
        "d_model": model.transformer.wte.embedding_dim,
        "n_heads": attn.num_heads,
        "d_head": attn.head_dim,
    }


@claim(
    "dd2.gpt2-small-sizes",
    "established",
    at=("n_heads=12, d_head=64", "PER LAYER (×12 layers)"),
    scope="GPT-2 small as transformers builds it from its default GPT2Config (documented as "
    "openai-community/gpt2's) on the meta device, sizes read off its modules",
)
def test_gpt2_small_has_12_layers_of_12_heads_of_64(measure):
    """GPT-2 small has 12 layers of width 768, each with 12 heads of width 64."""
    printed, built = printed_sizes(source_text(DD2)), built_sizes()
    for name, value in built.items():
        measure(name, value, printed=printed.get(name))
    assert built == printed
