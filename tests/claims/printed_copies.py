"""Where each number printed more than once stands in the texts, and how to read each copy.

ch04.printed-twice-agree and dd2.printed-twice-agree read every copy at run time by these
patterns (tests/claims/printed_text.py: ``{}`` the copy, ``{_}`` a number skipped); a copy
printed as parts, a shape or a fraction is read by one of the small readers below. The
``*_AT`` tuples are the claims' anchors in the texts, for the coverage maps.
"""

from __future__ import annotations

from tests.claims.printed_text import number, read, value


def where_printed(copies: dict) -> str:
    """The marker's words for one quantity: the places it is printed."""
    return "one value in: " + ", ".join(copies)


def printed_copies(text: str, copies: dict) -> dict:
    """Each copy of one quantity as the text prints it now (place -> printed string)."""
    return {where: copy(text) if callable(copy) else number(text, copy)
            for where, copy in copies.items()}  # fmt: skip


# ch04 ----------------------------------------------------------------------------------------

CONV_BY_DISTANCE = (  # the convolution's printed recall by distance, up to distance 8
    "convolution {_} params mean accuracy {_} ({_}s)\n"
    " by distance 20:{_} 18:{_} 16:{_} 14:{_} 12:{_} 10:{_} 8:{_} "
)
CH04_TWICE = {
    "conv recall 2 tokens back": {
        "summary": "recall {} two tokens back",
        "post-mortem": "It scores {} when the key",
        "output": CONV_BY_DISTANCE + "6:{_} 4:{_} 2:{}",
    },
    "conv recall 4 tokens back": {
        "post-mortem": "{} at 4 and",
        "output": CONV_BY_DISTANCE + "6:{_} 4:{} 2:{_}",
    },
    "conv recall 6 tokens back": {
        "post-mortem": "and {} at 6,",
        "output": CONV_BY_DISTANCE + "6:{} 4:{_} 2:{_}",
    },
    "conv Shakespeare loss": {
        "summary": "best Shakespeare loss, {}",
        "prose": "The convolution wins clearly ({})",
        "output": "convolution params {_} final val loss {}",
        "table": "Shakespeare, convolution {_} {_} ± {_} {} /",
    },
    "LSTM recall mean": {
        "summary": "recall about {} at every distance;",
        "post-mortem": "flat, at about {} at every distance",
        "output": "LSTM {_} params mean accuracy {}",
        "table": "recall accuracy, LSTM {_} {_} ± {_} {} /",
    },
    "LSTM Shakespeare loss": {
        "summary": "at every distance; Shakespeare loss {}",
        "prose": "the LSTM is second ({})",
        "output": "LSTM params {_} final val loss {}",
        "table": "Shakespeare, LSTM {_} {_} ± {_} {} /",
    },
    "attention recall, seed 0": {
        "summary": "recall {} at every distance in two seeds",
        "prose": "Attention scores {} at every distance",
        "output": "attention {_} params mean accuracy {}",
        "table": "recall accuracy, attention {_} {_} ± {_} {} /",
    },
    "attention recall, failed seed": {
        "prose": "stayed at {}, no better",
        "caveat": "in two seeds and {} in the third",
        "table": "recall accuracy, attention {_} {_} ± {_} {_} / {} /",
    },
    "attention Shakespeare loss": {
        "summary": "Shakespeare loss {}, last of the three",
        "prose": "attention is last ({})",
        "output": "(MHA) params {_} final val loss {}",
        "KV table": "attention (MHA) 4 1,024 {}",
        "KV prose": "against {} for full multi-head attention",
        "table": "Shakespeare, attention (MHA) {_} {_} ± {_} {} /",
    },
    "GQA loss": {
        "KV table": "GQA, 2 kv heads 2 512 {}",
        "KV prose": "GQA with half the cache reached {}",
        "seed table": "GQA, 2 kv heads {_} {_} ± {_} {} /",
    },
    "MQA loss": {
        "KV table": "MQA, 1 kv head 1 256 {}",
        "KV prose": "MQA with a quarter of the cache reached {}",
        "seed table": "MQA, 1 kv head {_} {_} ± {_} {} /",
    },
    "conv recall mean": {
        "output": "convolution {_} params mean accuracy {}",
        "table": "recall accuracy, convolution {_} {_} ± {_} {} /",
    },
    "conv seconds": {
        "prose": "against {} s for the convolution",
        "output": "convolution params {_} final val loss {_} ({}s)",
    },
    "LSTM seconds": {
        "prose": "and {} s for the LSTM",
        "output": "LSTM params {_} final val loss {_} ({}s)",
    },
    "attention seconds": {
        "prose": "thread: {} s for 600 steps",
        "output": "(MHA) params {_} final val loss {_} ({}s)",
    },
    "70B MHA cache (GB)": {
        "output": "70B-scale MHA (64 kv heads) : {} GB",
        "prose": "{} GB of cache per 4,096-token sequence",
    },
    "70B GQA cache (GB)": {
        "output": "70B-scale GQA (8 kv heads) : {} GB",
        "prose": "{} GB with 8 key-value heads",
    },
    "70B MQA cache (GB)": {
        "output": "70B-scale MQA (1 kv head) : {} GB",
        "prose": "{} GB with one",
    },
    "GQA 3-seed mean": {"table": "GQA, 2 kv heads {_} {} ±", "prose": "({} against {_} on average"},
    "MHA 3-seed mean": {
        "table": "Shakespeare, attention (MHA) {_} {} ±",
        "prose": "({_} against {} on average",
    },
    "attention recall 3-seed mean": {
        "table": "recall accuracy, attention {_} {} ±",
        "prose": "which is why its average is {}",
    },
}
CH04_TWICE_AT = (
    "recall 0.98 two tokens back", "It scores 0.98 when the key", "6:0.36 4:0.58 2:0.98",
    "best Shakespeare loss, 1.708", "The convolution wins clearly (1.708)",
    "final val loss 1.708 (45s)", "1.708 / 1.737 / 1.721", "recall about 0.22 at every distance",
    "Shakespeare loss 1.797", "the LSTM is second (1.797)", "final val loss 1.797 (46s)",
    "mean accuracy 0.22 (25s)", "flat, at about 0.22 at every distance", "0.22 / 0.22 / 0.21",
    "recall 1.00 at every distance in two seeds of three",
    "Attention scores 1.00 at every distance",
    "mean accuracy 1.00 (36s)", "1.00 / 0.19 / 1.00", "stayed at 0.19",
    "attention reached 1.00 in two seeds and 0.19 in the third",
    "Shakespeare loss 1.842, last of the three", "attention is last (1.842)",
    "final val loss 1.842 (65s)", "attention (MHA) 4 1,024 1.842",
    "against 1.842 for full multi-head attention", "1.842 / 1.836 / 1.838",
    "GQA, 2 kv heads 2 512 1.830", "GQA with half the cache reached 1.830",
    "1.830 / 1.839 / 1.857", "MQA, 1 kv head 1 256 1.856",
    "MQA with a quarter of the cache reached 1.856", "1.856 / 1.879 / 1.854",
    "mean accuracy 0.24 (26s)", "65 s for 600 steps, against 45 s for the convolution",
    "70B-scale MHA (64 kv heads) : 10.74 GB", "70B-scale MQA (1 kv head) : 0.17 GB",
    "10.7 GB of cache per 4,096-token sequence", "1.842 against 1.839 on average",
    "which is why its average is 0.73", "recall accuracy, attention 1.00 0.73 ± 0.47",
    "GQA, 2 kv heads 1.830 1.842 ± 0.014",
    "recall accuracy, convolution 0.24 0.20 ± 0.04",
    "recall accuracy, LSTM 0.22 0.22 ± 0.01",
    "Shakespeare, convolution 1.708 1.722 ± 0.015",
    "Shakespeare, LSTM 1.797 1.808 ± 0.014",
    "MQA, 1 kv head 1.856 1.863 ± 0.014", "Shakespeare, attention (MHA) 1.842 1.839 ± 0.003",
)  # fmt: skip


# dd2 ----------------------------------------------------------------------------------------


def total_of(*patterns: str):
    """A copy printed as parts: the sum of the numbers the patterns read."""
    return lambda text: str(int(sum(value(number(text, p)) for p in patterns)))


def ratio_of(pattern: str, flip: bool = False):
    """A copy printed as a fraction a/b (or, flipped, a weight's shape [in, out]: out / in)."""

    def copy(text: str) -> str:
        a, b = (value(v) for v in read(text, pattern))
        return str(b / a if flip else a / b)

    return copy


def millions_of(pattern: str):
    """A copy printed as an exact count, in millions."""
    return lambda text: str(value(number(text, pattern)) / 1e6)


def nth_of(pattern: str, n: int):
    """The n-th number a pattern reads (a range printed as low-high)."""
    return lambda text: read(text, pattern)[n]


FLASH_SECTION, FLASH_LIST = "Flash Attention achieves {}-{}x", "Flash Attention: {}-{}× speedup"
DD2_TWICE = {
    "GPT-2 vocabulary": {
        "breakdown": "Token embeddings: {} ×",
        "comparison table": "Vocab Size {}",
    },
    "GPT-2 context": {
        "breakdown": "Position embeddings: {} ×",
        "comparison table": "Context Length {}",
    },
    "W_Q parameters": {
        "shape trace": "Params: W_Q [{_}, {_}] = {}",
        "breakdown": "W_Q: {_} × {_} = {}",
    },
    "fc1 with bias": {
        "shape trace": "+ b_fc1 [{_}] = {}",
        "breakdown (W_fc1 + b_fc1)": total_of("W_fc1: {_} × {_} = {}", "b_fc1: {_} = {}"),
    },
    "fc2 with bias": {
        "shape trace": "+ b_fc2 [{_}] = {}",
        "breakdown (W_fc2 + b_fc2)": total_of("W_fc2: {_} × {_} = {}", "b_fc2: {_} = {}"),
    },
    "GPT-2 MLP ratio": {
        "shape trace (W_fc1's out / in)": ratio_of("Params: W_fc1 [{}, {}]", flip=True),
        "comparison table": "MLP Ratio {}×",
    },
    "embeddings (millions)": {
        "breakdown": millions_of("Embedding total: {}"),
        "by type": "Embeddings: {}M",
    },
    "total (millions)": {
        "breakdown": millions_of("GRAND TOTAL: {}"),
        "heading": "({}M parameters total)",
    },
    "SwiGLU width (x d)": {
        "SwiGLU box": ratio_of("(actually uses {}/{} × d"),
        "comparison table": "MLP Ratio {_}× ~{}×",
    },
    "FlashAttention speed-up, low": {
        "FlashAttention section": nth_of(FLASH_SECTION, 0),
        "efficiency list": nth_of(FLASH_LIST, 0),
    },
    "FlashAttention speed-up, high": {
        "FlashAttention section": nth_of(FLASH_SECTION, 1),
        "efficiency list": nth_of(FLASH_LIST, 1),
    },
}
DD2_TWICE_AT = (
    "Token embeddings: 50257 × 768", "Vocab Size 50,257 128,000+",
    "Position embeddings: 1024 × 768",
    "Context Length 1,024 8,192 - 128,000+", "Params: W_Q [768, 768] = 589,824",
    "W_Q: 768 × 768 = 589,824", "Params: W_fc1 [768, 3072] + b_fc1 [3072] = 2,362,368",
    "W_fc1: 768 × 3072 = 2,359,296", "b_fc1: 3072 = 3,072",
    "Params: W_fc2 [3072, 768] + b_fc2 [768] = 2,360,064", "W_fc2: 3072 × 768 = 2,359,296",
    "b_fc2: 768 = 768", "Shape: [1, 512, 768] @ [768, 3072] → [1, 512, 3072]",
    "MLP Ratio 4× ~2.7× (8/3)",
    "Embedding total: 39,383,808 (31.8%)", "Embeddings: 39.4M (31.7%)", "(124M parameters total)",
    "GRAND TOTAL: 124,402,944", "(actually uses 8/3 × d to match param count)",
    "Flash Attention achieves 2-4x speedup", "Flash Attention: 2-4× speedup, enables long contexts",
)  # fmt: skip
