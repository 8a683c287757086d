"""The article's kinds of attention head, probed in the chapter's trained attention model.

The article lists head types research has found in trained transformers: heads that attend to
the first token, to a fixed offset, to the previous token and to the query's own position.
The previous-token head is dd2.previous-token-heads; these are the other three. Each reads the
attention probe the model's training run already records (no further training), on one
validation batch: per head, the mean weight on the window's first position, on the query's
own position, and on the token k back for k = 1 .. 8, over every query with a choice (all but
the window's first).

The rules were declared with the probe's new fields, before any run had recorded them: a head
of the kind exists when it puts over half of its weight on its target, averaged over queries,
typically over seeds. The sentences are about large pretrained models (Clark et al. 2019
found these heads in BERT); this 4-layer character model is a small stand-in that cannot show
what they say, so the claims declare it (stand_in=): a verdict is "observed" or "not
observed" in the stand-in, never "refuted", never gating and never counted as tested.
Pretrained weights (GPT-2, BERT) would test the sentences themselves and are not on this
machine.
"""

from __future__ import annotations

from claimbook import Typical, claim, defaults, training

from experiments.lm import LMConfig, train_lm
from experiments.modules import MHA

SCOPE = (
    "4-block width-64 attention model of the chapter (4 heads a layer, about 205k parameters), "
    "600 AdamW steps of 32 x 64 characters of TinyShakespeare; weights read on one validation "
    "batch of 32 windows of 64 characters, which start anywhere in the text (no BOS token: the "
    "window's first position stands in for it)."
)
STAND_IN = (
    "the sentence speaks of large pretrained models (BERT, GPT-2); this 4-layer character model "
    "of 205k parameters, trained 600 steps on windows without a BOS token, shows whether a "
    "small model grows such a head, not whether those models have them."
)
pytestmark = defaults(level="speculative", scope=SCOPE)
mha_lm = training(train_lm, LMConfig(MHA))


def strongest(per_layer: list[list[float]]) -> float:
    return max(max(heads) for heads in per_layer)


def strongest_by_offset(per_layer: list[list[list[float]]]) -> dict[int, float]:
    """The largest weight any head puts on the token k back, for k = 2 .. 8, from the probe's
    per-head weights at offsets 1 .. 8 (layers, heads, offsets)."""
    return {k: max(head[k - 1] for heads in per_layer for head in heads) for k in range(2, 9)}


@claim("dd2.first-token-heads", at="Beginning-of-sequence heads: Attend to the first token",
       printed={"claim": "some heads attend to the first token"}, stand_in=STAND_IN,
       rule=Typical("strongest first-position head", above=0.5))  # fmt: skip
def test_a_head_attends_to_the_first_position(mha_lm, seed, measure):
    """First-position heads: a head of the chapter's trained Shakespeare attention model typically
    puts over half of its weight, averaged over queries, on its window's first position."""
    per_layer = mha_lm["probe"]["first_position"]
    for layer, heads in enumerate(per_layer, start=1):
        measure(f"first-position weight, layer {layer}", heads)
    measure("strongest first-position head", strongest(per_layer))


@claim("dd2.fixed-offset-heads", at="Fixed-offset heads: Attend to position i-k",
       printed={"claim": "some heads attend to position i-k for a fixed k"},
       stand_in=STAND_IN, remark="The offset k = 1 is the previous-token head, which the "
       "article lists apart (dd2.previous-token-heads); this claim looks 2 to 8 tokens back.",
       rule=Typical("strongest fixed-offset head, 2 to 8 back", above=0.5))  # fmt: skip
def test_a_head_attends_to_a_fixed_offset(mha_lm, seed, measure):
    """Fixed-offset heads: a head of the chapter's trained Shakespeare attention model
    typically puts over half of its weight, averaged over queries, on the token a fixed k back,
    for some k from 2 to 8."""
    best = strongest_by_offset(mha_lm["probe"]["offsets"])
    measure("strongest head at each offset, 2 to 8 back", list(best.values()), x=list(best))
    measure("strongest fixed-offset head, 2 to 8 back", max(best.values()))


@claim("dd2.diagonal-heads", at="Diagonal heads: Attend primarily to the same position",
       printed={"claim": "some heads attend primarily to the same position"},
       stand_in=STAND_IN,
       rule=Typical("strongest same-position head", above=0.5))  # fmt: skip
def test_a_head_attends_to_its_own_position(mha_lm, seed, measure):
    """Diagonal heads: a head of the chapter's trained Shakespeare attention model typically
    puts over half of its weight, averaged over queries, on the query's own position."""
    per_layer = mha_lm["probe"]["same_position"]
    for layer, heads in enumerate(per_layer, start=1):
        measure(f"same-position weight, layer {layer}", heads)
    measure("strongest same-position head", strongest(per_layer))
