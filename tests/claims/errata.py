"""Source errors that several claims show, and the corrections they share.

An erratum claim names the one error in the source it shows (``error=``); claims in
different modules that show the same error share the key here, and the correction an
author can paste is worded once, from what each claim measured.
"""

from __future__ import annotations

LLAMA70B_GQA = "llama70b-cache-ignores-gqa"
GPT2_SHARES = "gpt2-shares-misprinted"
GPT2_ATTENTION_BIASES = "gpt2-attention-biases-left-out"
GPT2_POST_NORM = "gpt2-called-post-norm"
LLAMA2_70B_KV_HEADS = 8  # LLaMA 2 70B's published config.json (the chapter prints it too)


def llama70b_gqa_correction(measure, per_token_bytes: int) -> str:
    """Record the correction of the 70B cache from a measured per-token size (8 kv heads)."""
    mib, gib = per_token_bytes / 2**20, per_token_bytes * 32768 / 2**30
    mb, gb = per_token_bytes / 1e6, per_token_bytes * 32768 / 1e9
    measure("LLaMA 2 70B with its 8 kv heads: bytes per token", per_token_bytes)
    measure("LLaMA 2 70B with its 8 kv heads: GB at 32K tokens", gb)
    return measure.correct(
        "KV cache per token = 2 × n_layers × n_kv_heads × d_head × bytes (n_kv_heads = n_heads "
        f"without GQA). LLaMA 70B (GQA: {LLAMA2_70B_KV_HEADS} kv heads of width 128 for its 64 "
        f"query heads): Per token: 2 × 80 × {LLAMA2_70B_KV_HEADS} × 128 × 2 bytes = "
        f"{per_token_bytes:,} bytes = {mib:.2f} MiB ({mb:.2f} MB); 32K tokens: {gib:g} GiB "
        f"({gb:.1f} GB)"
    )


def gpt2_norm_correction(formula: str = "x + Attn(Norm(x))") -> str:
    """The one correction of GPT-2's norm-placement cell (label and formula), which three
    claims show: the formula is the one GPT-2's block computes (dd2.post-norm-formula)."""
    return (
        f"Norm Placement, GPT-2's column of the comparison table: Pre-norm, {formula} (as "
        "LLaMA 3's, and as the article's GPT-2 shape trace and code have it)"
    )


def gpt2_shares_correction(parts: list[tuple[str, float]], total: float, biases: int) -> str:
    """The GPT-2 box's misprinted shares as the box should print them. The box leaves out the
    attention biases (GPT2_ATTENTION_BIASES), whose correction restates its counts and total;
    so that the two corrections of the one box agree, the shares are over that same total:
    ``parts`` are (name, count with the biases), ``total`` the total with them, ``biases``
    how many that adds."""
    shares = "; ".join(f"{name}: {100 * n / total:.1f}%" for name, n in parts)
    return (
        f"Shares of GPT-2 small's {total:,.0f} parameters (the box's counts with the {biases:,} "
        f"attention biases it leaves out, as the biases' correction restates them): {shares}"
    )
