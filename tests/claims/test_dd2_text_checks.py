"""The attention deep dive, two sentences checked against what a causal model can do.

Each claim reads the sentence from the text at run time, then runs transformers' own
layers (random weights, nothing downloaded) to see whether what the sentence describes can
happen: the previous-token head of the induction circuit writing about a later token, and
where a RoPE model puts its positions. Nothing trains; the file runs in a few seconds.
"""

from __future__ import annotations

import re

import torch
from claimbook import claim, defaults, source_text

from experiments.reference_trace import gpt2, llama, recording
from tests.claims.printed_text import read
from tests.claims.sources import DD2

pytestmark = defaults(level="established")

HARRY = 'When processing "{w}," it looks at "{w}" and writes information about what followed ({w})'
CONTEXT = r'Context: "([^"]+)"'
TINY = dict(num_hidden_layers=1, hidden_size=32, num_attention_heads=4, intermediate_size=64)


def _words(context: str) -> list[str]:
    """The box's context as tokens: its words, and '[???]' for the token to predict."""
    return re.findall(r"\[\?+\]|[A-Za-z']+", context)


def _output_change(words: list[str], at: int, swap: int) -> tuple[float, float]:
    """A causal LLaMA layer's weight from position ``at`` on position ``swap`` (largest over
    heads), and how much the output at ``at`` moves when the token at ``swap`` is replaced by
    one not in ``words`` (each distinct word one token id)."""
    vocab = {w: i for i, w in enumerate(dict.fromkeys(words))}
    ids, new_id = [vocab[w] for w in words], len(vocab)
    torch.manual_seed(0)
    model = llama(vocab_size=max(*ids, new_id) + 1, **TINY)
    changed = list(ids)
    changed[swap] = new_id
    with torch.no_grad(), recording() as calls:
        before = model(torch.tensor([ids])).last_hidden_state[0, at]
        after = model(torch.tensor([changed])).last_hidden_state[0, at]
    weight = calls[0]["weights"][0, :, at, swap].max().item()
    return weight, (after - before).abs().max().item()


def _keep_input(layer: torch.nn.Module, seen: dict, name: str) -> None:
    """Keep the hidden states a decoder layer receives, under ``name``."""

    def keep(module, args, kwargs):
        seen[name] = args[0] if args else kwargs["hidden_states"]

    layer.register_forward_pre_hook(keep, with_kwargs=True)


def _harry_sentence(text: str) -> tuple[str, str, str, list[str]]:
    """The sentence's word written at, the word looked at, the word written about, and the
    circuit box's context as tokens."""
    at_word, looks_at, about = read(text, HARRY)
    return at_word, looks_at, about, _words(re.search(CONTEXT, text)[1])


def _previous_token_correction(about: str, at_word: str) -> str:
    """The sentence corrected: the head writes at the later token, about the one before it."""
    return (
        f"Previous token head (in an earlier layer): copies information from each token to the "
        f'next position. When processing "{about}," it looks at the token before it, '
        f'"{at_word}," and writes "{about} follows {at_word}" into its own position.'
    )


@claim("dd2.previous-token-head-reads-the-past",
       at='When processing "Harry," it looks at "Harry" and writes information',
       printed={"previous-token head": 'at "Harry", writes what followed ("Potter")'},
       scope="the sentence and the circuit box's context, read at run time; transformers' causal "
       "LLaMA layer (width 32, 4 heads, random weights) on the context's tokens",
       erratum="a causal model's first 'Harry' cannot see 'Potter', which comes after it, so the "
       "previous-token head cannot write 'what followed' there; it works at 'Potter', attending "
       "back to 'Harry', as the article's own box says ('At \"Potter\", attend to \"Harry\"')",
       error="induction-reads-the-future")  # fmt: skip
def test_previous_token_head_writes_only_what_its_position_can_see(measure):
    """The token where the sentence's previous-token head writes can see the token it writes
    about: in a causal layer, a position reads only itself and the positions before it."""
    at_word, looks_at, about, words = _harry_sentence(source_text(DD2))
    at = measure("position written to (first occurrence)", words.index(at_word))
    written = measure(f'position of "{about}"', words.index(about))
    measure(f'position looked at ("{looks_at}")', words.index(looks_at))
    weight, moved = _output_change(words, at, written)
    measure(f'largest weight from "{at_word}" on "{about}"', weight)
    moved = measure(f'output change at "{at_word}" when "{about}" is replaced', moved)
    measure.correct(_previous_token_correction(about, at_word))
    assert moved > 0, f'the output at "{at_word}" cannot depend on the later "{about}"'


def _trace_positions(text: str) -> tuple[str, bool, bool, bool]:
    """What the trace says of positions: Step 0's line; whether a step applies RoPE to Q and K;
    whether both are rotated by apply_rope; whether Step 0 offers added position embeddings."""
    step0 = next(ln for ln in text.splitlines() if ln.lstrip().startswith("+ Positions:"))
    rope_in_step3 = re.search(r"Step \d+: Apply RoPE to Q and K", text) is not None
    rotated = all(f"{m}_h_rotated = apply_rope({m}_h, positions)" in text for m in "QK")
    return step0, rope_in_step3, rotated, "add positional embeddings" in step0


def _repeated_token_gaps() -> tuple[dict[str, float], torch.Tensor]:
    """One token at positions 0 and 1 through a one-layer LLaMA (RoPE) and GPT-2 (learned
    positions), width 32, seed 0: the largest gap between the two positions in each layer's
    input, and the LLaMA layer's rotated queries (heads, tokens, d_head)."""
    torch.manual_seed(0)
    rope, learned = llama(vocab_size=4, **TINY), gpt2(vocab_size=4, n_layer=1, n_embd=32, n_head=4)
    seen = {}
    _keep_input(rope.layers[0], seen, "rope")
    _keep_input(learned.h[0], seen, "learned")
    ids = torch.tensor([[2, 2]])  # one token at positions 0 and 1
    with torch.no_grad(), recording() as calls:
        rope(ids)
        learned(ids)
    gaps = {name: (x[0, 0] - x[0, 1]).abs().max().item() for name, x in seen.items()}
    return gaps, calls[0]["query"][0]


@claim("dd2.trace-positions-once",
       at=("+ Positions:   Add RoPE rotation (or add positional embeddings)",
           "Apply RoPE to Q and K"),
       printed={"Step 0": "add RoPE rotation (or add positional embeddings)",
                "Step 3": "RoPE on Q, K"},
       scope="the trace's Step 0 and Step 3, read at run time; transformers' LLaMA (RoPE) and "
       "GPT-2 (learned positions) layers at width 32, random weights, one token repeated at two "
       "positions",
       remark="Step 0's line holds only through its alternative, added position embeddings "
       "(GPT-2's way). Read as 'add a RoPE rotation to X' it contradicts Step 3: a RoPE model "
       "leaves the input unrotated and rotates each head's Q and K after the projections, and "
       "rotating X as well would apply the rotation twice.")  # fmt: skip
def test_positions_enter_a_rope_layer_only_at_q_and_k(measure):
    """The trace's layer takes positions in once: a RoPE model's input carries none and its
    queries are rotated by position (Step 3), while added position embeddings (Step 0's
    alternative) are what put positions into a GPT-2 input."""
    step0, rope_in_step3, rotated, offers_embeddings = _trace_positions(source_text(DD2))
    measure("Step 0's positions line", step0.strip())
    gap, q = _repeated_token_gaps()
    rope_input = measure("RoPE model: input gap between the two positions", gap["rope"])
    q_gap = measure("RoPE model: rotated query gap", (q[:, 0] - q[:, 1]).abs().max().item())
    added = measure("GPT-2: input gap between the two positions", gap["learned"])
    assert rope_in_step3 and rotated, "Step 3 no longer rotates Q and K"
    assert rope_input == 0 and q_gap > 0 and added > 0
    assert offers_embeddings, "Step 0 adds RoPE at the input, which a RoPE model never does"
