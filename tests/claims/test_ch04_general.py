"""Chapter 4, general checks (1): printed outputs and attributions, as a reviewer reads them.

Each claim is a sweep over the text as it stands (read at run time, never transcribed):
every printed output against the code cell that prints it, and every dated attribution
against the field's record (:mod:`experiments.literature_record`). The worked examples and
the tables are in test_ch04_general_tables.py. Nothing trains; the file runs in a second.
"""

from __future__ import annotations

import ast
import re
import statistics

import pytest
from claimbook import WHOLE_TEXT, claim, source_text
from claimbook.declare.numbers import reproduces
from torch import nn

from experiments import literature_record as record
from experiments.text_tables import citations, line_with, matching, norm, number, setting
from tests.claims.record_checks import years_against_record
from tests.claims.sources import CH04

TEXT = "the chapter's text read at run time; no experiment runs"


# (b) printed outputs against the code that prints them --------------------------------------


def _reach_printout(text, measure):
    k = int(setting(text, "def __init__(self, dim, kernel=4)", "kernel"))
    t = int(setting(text, "def reach(mixers, T=40, dim=16)", "T"))
    layers = ast.literal_eval(re.search(r"for L in (\[[\d, ]+\])", text).group(1))
    step = int(re.search(r"\{L \* (\d+) \+ 1\}", text).group(1))
    rows = matching(
        text,
        r"(\d+) conv layers, kernel (\d+): last token sees +(\d+) of (\d+) "
        r"positions \(formula L\(k-1\)\+1 = (\d+)\)",
    )
    bad = [] if [int(m[1]) for m in rows] == layers else ["the printed L are not the code's"]
    for m in rows:
        L, formula = int(m[1]), int(m[5])
        measure(f"formula at L={L}", L * (k - 1) + 1, printed=m[5])
        bad += [f"L={L}: {m.group(0)}"] * (
            int(m[2]) != k
            or int(m[4]) != t
            or formula != L * step + 1
            or step != k - 1
            or int(m[3]) != formula
        )
    said = re.search(r"We stack L convolution layers with kernel (\d+), feed in (\d+) random", text)
    bad += ["the set-up prose"] * ((int(said[1]), int(said[2])) != (k, t))
    return bad


def _mixer_params(text, measure):
    dim = int(re.search(r"CausalConv\((\d+)\)\), \(\"LSTMMixer\"", text).group(1))
    k = int(setting(text, "def __init__(self, dim, kernel=4)", "kernel"))
    width = float(re.search(r"int\(([\d.]+) \* dim\)", text).group(1))
    heads = int(setting(text, "def __init__(self, dim, n_heads=4, n_kv_heads=None)", "n_heads"))
    h = int(width * dim)
    built = {  # torch's own modules, built as the cells build them
        "CausalConv": [nn.Conv1d(dim, dim, k, bias=False)],
        "LSTMMixer": [nn.LSTM(dim, h, batch_first=True), nn.Linear(h, dim, bias=False)],
        "Attention": [
            nn.Linear(dim, dim, bias=False),
            nn.Linear(dim, 2 * dim, bias=False),
            nn.Linear(dim, dim, bias=False),
        ],
    }
    printed = {
        m[1]: m[2]
        for m in matching(
            text,
            r"(CausalConv|LSTMMixer|Attention)\b.*? "
            r"([\d,]+) parameters at dim (?:\d+)$",
        )
    }
    bad = []
    for name, mods in built.items():
        n = sum(p.numel() for m in mods for p in m.parameters())
        measure(f"{name} parameters", n, printed=printed.get(name))
        bad += [name] * (name not in printed or number(printed[name]) != n)
    near = 4 * dim**2  # the LSTM's docstring: the width keeps parameters near 4 * dim^2
    bad += ["LSTM width"] * (abs(number(printed.get("LSTMMixer", "0")) - near) > 0.01 * near)
    return bad + ["Attention heads"] * (f"Attention, {heads} heads" not in norm(text))


def _recall_printout(text, measure):
    pairs = int(re.search(r"N_PAIRS, N_SYM = (\d+), \d+", text).group(1))
    want = [2 * (pairs - i) for i in range(pairs)]  # the code's distance = 2 * (N_PAIRS - i)
    heads = matching(text, r"(convolution|LSTM|attention) +[\d,]+ params mean accuracy ([\d.]+)")
    rows = matching(text, r"by distance ((?:\d+:[\d.]+ ?)+)$")
    bad = [] if len(heads) == len(rows) == 3 else ["three printouts expected"]
    for head, row in zip(heads, rows, strict=False):  # counts checked above
        d, a = zip(
            *[(int(x), float(y)) for x, y in re.findall(r"(\d+):([\d.]+)", row[1])], strict=True
        )
        mean = measure(f"{head[1]} mean of the printed row", statistics.fmean(a), printed=head[2])
        bad += [f"{head[1]} distances"] * (list(d) != want)
        bad += [f"{head[1]} mean"] * (abs(mean - float(head[2])) > 0.01)  # rows are rounded
    last, first = re.search(
        r"\((\d+) tokens for the last pair, (\d+) for the first\)", text
    ).groups()
    return bad + ["prose distances"] * ([int(first), int(last)] != [want[0], want[-1]])


def _row(text, mixer):
    head = next(i for i, ln in enumerate(text.splitlines()) if re.match(rf"{mixer} +\d", ln))
    line = text.splitlines()[head + 1]
    return {int(d): float(a) for d, a in re.findall(r"(\d+):([\d.]+)", line)}


def _recall_prose(text, measure):
    lstm, conv, attn = _row(text, "LSTM"), _row(text, "convolution"), _row(text, "attention")
    flat = re.search(r"flat, at about ([\d.]+) at every distance", text).group(1)
    worst = measure(
        "LSTM: largest gap from the stated level", max(abs(a - float(flat)) for a in lstm.values())
    )
    m = re.search(
        r"scores ([\d.]+) when the key is (\d+) tokens back, ([\d.]+) at (\d+) and "
        r"([\d.]+) at (\d+), and chance \(about ([\d.]+)\) for every key more than "
        r"(\d+) tokens back",
        text,
    )
    bad = ["LSTM not flat"] * (worst > 0.05)
    for v, d in ((m[1], m[2]), (m[3], m[4]), (m[5], m[6])):
        measure(f"conv at {d}", conv[int(d)], printed=v)
        bad += [f"conv at {d}"] * (conv[int(d)] != float(v))
    beyond = [a for d, a in conv.items() if d > int(m[8])]
    far = measure(
        "conv beyond the window: largest gap from chance", max(abs(a - float(m[7])) for a in beyond)
    )
    bad += ["conv beyond the window"] * (far > 0.05)
    said = re.search(r"Attention scores ([\d.]+) at every distance", text).group(1)
    return bad + ["attention"] * any(a != float(said) for a in attn.values())


def _heatmap(text, measure):
    pairs = int(re.search(r"N_PAIRS, N_SYM = (\d+), \d+", text).group(1))
    heads = int(setting(text, "def __init__(self, dim, n_heads=4, n_kv_heads=None)", "n_heads"))
    said = re.search(r"each head's weights over the (\d+) earlier tokens", text).group(1)
    measure("earlier tokens", 2 * pairs, printed=said)
    measure("columns of the weights (the query's own included)", 2 * pairs + 1)
    out = re.search(r"correct value: (v\d+) most-attended token per head: \[(.*)\]", norm(text))
    tops = re.findall(r"'(v?k?\d+)'", out[2])
    four = re.search(r"In layer 2, all (\w+) heads put nearly all their weight", text).group(1)
    words = {"two": 2, "three": 3, "four": 4, "eight": 8}
    bad = ["earlier tokens"] * (int(said) != 2 * pairs)
    bad += ["second layer"] * ("attn_model.blocks[1]" not in text)
    return bad + ["heads"] * (
        len(tops) != heads or words.get(four) != heads or any(t != out[1] for t in tops)
    )


def _lm_printout(text, measure):
    m = re.search(
        r"(\d+)-block language models of width (\d+), with context (\d+) and (\d+) "
        r"steps",
        text,
    )
    code = line_with(text, "def __init__(self, vocab_size, make_mixer, dim=64, n_layers=4)")
    run = text[text.index("mixers = {") : text.index("mlexp.plot_histories(")]  # In [10]
    bad = ["blocks"] * (f"n_layers={m[1]}" not in code) + ["width"] * (f"dim={m[2]}" not in code)
    bad += ["context"] * (f"block_size={m[3]}" not in run) + ["steps"] * (
        f"steps={m[4]}" not in run
    )
    counts = [number(x[1]) for x in matching(text, r"\S.*? params ([\d,]+) final val loss")]
    about = number(re.search(r"All three models have about ([\d,]+) parameters", text).group(1))
    for i, n in enumerate(counts):
        measure(f"parameters, model {i + 1}", n, printed=f"about {about:,.0f}")
    bad += ["about"] * (len(counts) != 3 or any(abs(n - about) > 0.005 * about for n in counts))
    caption = re.search(r'plot_histories\(histories, "([^"]+)"\)', text)[1]
    spread = measure("relative spread of the parameter counts", max(counts) / min(counts) - 1)
    return bad + ["caption: equal parameters"] * ("equal parameters" in caption and spread > 1e-3)


def _kv_printout(text, measure):
    call = re.search(r"kv_bytes_per_token\((\d+), n_kv, (\d+)\):18,d\}", text)
    dim = int(
        setting(text, "def __init__(self, vocab_size, make_mixer, dim=64, n_layers=4)", "dim")
    )
    bad = ["head width"] * (int(call[2]) != dim // 4)  # 4 query heads (In [11])
    for m in matching(
        text, r"(attention \(MHA\)|GQA, 2 kv heads|MQA, 1 kv head) +(\d+) +([\d,]+) "
    ):
        ours = 2 * int(call[1]) * int(m[2]) * int(call[2]) * 2
        measure(f"{m[1]}: cache bytes per token", ours, printed=m[3])
        bad += [m[1]] * (ours != number(m[3]))
    big = re.search(r"kv_bytes_per_token\((\d+), n_kv, (\d+)\) \* ([\d_]+) / 1e9", text)
    lines = matching(
        text,
        r"70B-scale \w+ \((\d+) kv heads?\) *: +([\d.]+) GB of cache for one "
        r"([\d,]+)-token sequence",
    )
    for m in lines:
        gb = 2 * int(big[1]) * int(m[1]) * int(big[2]) * 2 * int(big[3]) / 1e9
        measure(f"70B scale, {m[1]} kv heads (GB)", gb, printed=m[2])
        bad += [f"70B {m[1]}"] * (not reproduces(gb, m[2]) or number(m[3]) != int(big[3]))
    return bad + ["70B lines"] * (len(lines) != 3)


OUTPUTS = {
    "reach printout": _reach_printout,
    "mixer parameter printout": _mixer_params,
    "recall printouts": _recall_printout,
    "recall prose against its printout": _recall_prose,
    "attention-weights heatmap": _heatmap,
    "language-model set-up and printout": _lm_printout,
    "KV-cache printout": _kv_printout,
}


@claim("ch04.outputs-match-their-code", "established",
       at=("1 conv layers, kernel 4: last token sees 4 of 40 positions",
           "LSTMMixer 16,380 parameters at dim 64", "by distance 20:0.26 18:0.21",
           "The LSTM's accuracy is flat, at about 0.22 at every distance",
           "each head's weights over the 20 earlier tokens",
           "All three models have about 205,000 parameters", "GQA, 2 kv heads 2 512 1.830"),
       place=WHOLE_TEXT,
       scope=TEXT + "; the parameter counts come from torch's own modules built with the cells' "
       "arguments. 'About' a level is read as within 0.05 of it; 'about 205,000' as within 0.5%; "
       "the loss figure's 'equal parameters' as within 0.1% of each other.",
       remark="The heatmap item checks that 20 tokens come before the query; that the caption "
       "calls the weights, which cover 21 positions (the query's own included), weights over "
       "those 20 is the erratum ch04.heatmap-caption-positions. The conv's 0.09 at distance 10 "
       "is 0.03 from chance, inside the reading of 'about 0.06'.")  # fmt: skip
@pytest.mark.parametrize("item", list(OUTPUTS))
def test_each_printed_output_follows_from_its_code(item, measure):
    """Each output the chapter prints (the reach lines, the parameter counts, the recall rows, the
    KV-cache table) is what the code beside it computes, and each sentence that describes an output
    (the LSTM's flat recall, the conv's window, the heatmap, the model set-up) agrees with the
    printed numbers and the code's settings."""
    bad = OUTPUTS[item](source_text(CH04), measure)
    assert not bad, f"disagrees with its code or printout: {bad}"


# (c) attributions against the field's record --------------------------------------------------


def _attributions(text, kind):
    found = citations(text, record.system)
    if kind == "reading-list titles":
        return [c for c in found if c.title]
    if kind == "what each work introduced":
        return [c for c in found if c.subject or c.acronym]
    return found


ATTRIBUTIONS = ("who and when", "what each work introduced", "reading-list titles")


@claim("ch04.attributions-match-record", "established",
       at=("(LeCun et al., 1989; AlexNet, 2012)", "(MQA; Shazeer, 2019)",
           "(S4; Gu, Goel and Ré, 2021)", "Hochreiter and Schmidhuber, 1997, Long Short-Term"),
       place=WHOLE_TEXT,
       scope=TEXT + ", against the record in experiments/literature_record.py (arXiv id or venue "
       "per work). A year is right when it is the work's first public version or its formal "
       "publication (Bahdanau et al. 2014 is ICLR 2015).",
       remark="Cho et al. (2014) is cited for seq2seq with LSTMs; its encoder-decoder used the "
       "gated unit now called the GRU (the record lists it): the date and credit hold, the unit "
       "is ch04.seq2seq-units.")  # fmt: skip
@pytest.mark.parametrize("kind", ATTRIBUTIONS)
def test_every_attribution_matches_the_record(kind, measure):
    """Every dated attribution in the chapter (who introduced what, and when, in the prose and the
    reading list) names the authors, year, contribution and title the field records for that work.
    """
    found = _attributions(source_text(CH04), kind)
    bad = years_against_record(found, measure)
    measure("attributions found", len(found))
    assert found and not bad, bad
