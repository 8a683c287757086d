"""A claim's measures tables: each measured quantity beside the number the source prints,
one column per seed (or, beyond a few seeds, one wrapping cell)."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass

from claimbook.declare.numbers import fmt
from claimbook.storage.results import label, measures

SEED_COLUMNS = 6  # more seeds than this: a measures table keeps its per-seed values in one cell
CALL = re.compile(r"[A-Za-z_][\w.]*\((\w+=.*)\)", re.S)  # a dataclass's repr: Spec(kind='conv')
NAMED = re.compile(r"<(?:function|class|built-in function|bound method) '?([\w.]+)'?.*>", re.S)


@dataclass
class ValueRow:
    """One measured quantity across seeds: printed value and one cell per seed."""

    name: str
    printed: str
    cells: list[str]
    spread: str
    reproduced: str  # "yes", "no (1 of 3 seeds)", or "" when nothing is printed


def value_words(value) -> str:
    """A test parameter as a reader reads it: a dataclass's repr as its fields, unquoted
    ("kind=conv, kernel=4"), a function or class as its name; anything else as it is."""
    text = str(value)
    if call := CALL.fullmatch(text):
        return re.sub(r"""=(['"])([^'"\\]*)\1""", r"=\2", call.group(1))
    if named := NAMED.fullmatch(text):
        return named.group(1)
    return text


def field_words(key: str, value) -> str:
    """One field or parameter without its "name=" label: a word as itself ("attention"), a
    count by what it counts ("n_heads=4": "4 heads"), another number beside its name in words
    ("layers 4"), a flag by its name ("causal", "not causal"); "" for None."""
    if value is None or value == "None":
        return ""
    if isinstance(value, bool) or value in ("True", "False"):
        return key.replace("_", " ") if value in (True, "True") else f"not {key.replace('_', ' ')}"
    if not isinstance(value, int | float) and not re.fullmatch(r"-?[\d.]+(?:e-?\d+)?", str(value)):
        return str(value)
    if key.startswith("n_"):
        return f"{value} {key[2:].replace('_', ' ')}"
    return f"{key.replace('_', ' ')} {value}"


def param_words(key: str, value) -> str:
    """A parameter in words, no "name=" label and no repr: a dataclass as its fields' words
    ("attention, kernel 4, 4 heads, 4 kv heads"), a function as its name."""
    if call := CALL.fullmatch(str(value)):
        fields = re.findall(r"""(\w+)=('[^']*'|"[^"]*"|[^,]+)""", call.group(1))
        words = [field_words(k, v.strip().strip("'\"")) for k, v in fields]
        return ", ".join(w for w in words if w)
    if named := NAMED.fullmatch(str(value)):
        return named.group(1)
    return field_words(key, value)


def pytest_id(nodeid: str) -> str:
    """An instance's pytest id without its seed: "attention" of ``test_x[attention-seed0]``."""
    inner = nodeid.partition("[")[2].rpartition("]")[0]
    return "-".join(p for p in inner.split("-") if not re.fullmatch(r"seed\d+", p))


def params_words(params: dict, nodeid: str = "") -> str:
    """An instance's parameters in words: "layers 4", or for one dataclass parameter the
    pytest id it was given ("attention"), else its fields ("conv, kernel 4")."""
    composite = [k for k, v in params.items() if value_words(v) != str(v)]
    given = pytest_id(nodeid)
    if len(params) == 1 and composite and given and not re.fullmatch(rf"{composite[0]}\d+", given):
        return given  # the author's own id for it
    return ", ".join(w for w in (param_words(k, v) for k, v in params.items()) if w)


def shown_names(claim: dict) -> dict[str, str]:
    """Each measure's label (:func:`claimbook.judge.claims.label`, the key rules and the
    baseline use) mapped to the name a page shows: its parameters in words where they add
    something, that is where the same name is measured under other parameters too (or the
    claim has one set of parameters, which only they name), and not already in the name."""
    labels: dict[str, set] = defaultdict(set)
    sets = set()
    for inst in claim["instances"]:
        sets.add(repr(sorted(inst["params"].items(), key=lambda kv: kv[0])))
        for m in inst["measures"]:
            labels[m["name"]].add(label({**m, "params": inst["params"]}))
    shown = {}
    for inst in claim["instances"]:
        words = params_words(inst["params"], inst.get("nodeid", ""))
        for m in inst["measures"]:
            key, name = label({**m, "params": inst["params"]}), m["name"]
            needed = len(labels[name]) > 1 or len(sets) == 1
            plain = key == name or not words or words in name or not needed
            shown[key] = name if plain else f"{name} ({words})"
    return shown


YEARS = re.compile(r"\byears?\b", re.IGNORECASE)


def as_year(value, printed=None, name: str = "", yearly: bool = False) -> bool:
    """Whether a whole number is shown without a thousands separator, as a year ("1989"):
    when the source prints it without one ("1989", or a context of "1024", where a count
    printed "2,048" keeps its comma), when its measure's name says years, or in a years
    table (``yearly``) when it lies in 1000-2999 and nothing is printed beside it. A whole
    float counts too: the run history stores every value as a float."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or abs(value) < 1000:
        return False
    if isinstance(printed, str):
        return bool(re.fullmatch(r"\d{4,}", printed.strip()))
    return bool(YEARS.search(name)) or (yearly and 1000 <= value <= 2999 and printed is None)


def years_table(claim: dict) -> bool:
    """A claim whose printed integers are mostly written as 4-digit years ("1989")."""
    printed = [m["printed"] for m in measures(claim) if isinstance(m.get("printed"), str)
               and isinstance(m["value"], int) and not isinstance(m["value"], bool)]  # fmt: skip
    years = [p for p in printed if re.fullmatch(r"[12]\d{3}", p.strip())]
    return bool(printed) and 2 * len(years) > len(printed)


def shown_value(value, printed=None, name: str = "", yearly: bool = False) -> str:
    """A measured value as a reader reads it: :func:`fmt`, a year as a year."""
    return str(int(value)) if as_year(value, printed, name, yearly) else fmt(value, printed)


def shown_cell(by_seed: dict, book: dict, seed, name: str = "", yearly: bool = False) -> str:
    """One seed's value, with at least the digits printed beside it ("" if not measured)."""
    if seed not in by_seed:
        return ""
    return shown_value(by_seed[seed], book.get(seed, book.get(None)), name, yearly)


def spread(values: list) -> str:
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) < 2:
        return ""
    mean, sd = statistics.mean(nums), statistics.stdev(nums)
    if sd <= 1e-12 * max(abs(mean), 1e-300):  # identical values up to float rounding
        sd = 0
    return f"{fmt(mean)} ± {fmt(sd)}"


def reproduced(checks: list[bool]) -> str:
    if not checks:
        return ""
    if all(checks):
        return "yes"
    return f"no ({len(checks) - sum(checks)} of {len(checks)})"


def curve_rows(claim: dict) -> list[ValueRow]:
    """List-valued measures with a printed list (accuracy by distance) or no figure to
    draw them (weights per head), one row per seed."""
    rows = []
    for m in measures(claim):
        if isinstance(m["value"], list) and ("printed" in m or m.get("x") is None):
            seed = "" if m["seed"] is None else f" (seed {m['seed']})"
            rows.append(
                ValueRow(
                    name=m["name"] + seed,
                    printed=fmt(m["printed"]) if "printed" in m else "",
                    cells=[fmt(m["value"], m.get("printed"))],
                    spread="",
                    reproduced=reproduced(
                        [m["reproduced"]] if m.get("reproduced") is not None else []
                    ),
                )
            )
    return rows


def value_rows(claim: dict) -> tuple[list[str], list[ValueRow]]:
    """Scalar measures as rows (name and parameters) by seed columns."""
    # figure points (scalars with an x) are drawn, not tabulated
    ms = [m for m in measures(claim) if not isinstance(m["value"], list) and m.get("x") is None]
    seeds = sorted({m["seed"] for m in ms if m["seed"] is not None})
    columns = [f"seed {s}" for s in seeds] or ["value"]
    grouped: dict[str, dict] = defaultdict(dict)
    printed: dict[str, object] = {}
    checks: dict[str, list] = defaultdict(list)
    shown = shown_names(claim)
    for m in ms:
        name = shown[label(m)]
        if m.get("unit"):
            name += f" [{m['unit']}]"
        grouped[name][m["seed"]] = m["value"]
        if "printed" in m:
            printed.setdefault(name, {})[m["seed"]] = m["printed"]
        if m.get("reproduced") is not None:
            checks[name].append(m["reproduced"])
    rows, yearly = [], years_table(claim)
    for name, by_seed in grouped.items():
        keys = seeds or [None]
        book = printed.get(name, {})
        book_values = sorted({shown_value(v, None, name, yearly) for v in book.values()})
        over_seeds = spread([by_seed[s] for s in keys if s in by_seed])
        if seeds and None in by_seed:  # a value about all seeds at once, in a per-seed table
            over_seeds = fmt(by_seed[None])
        rows.append(
            ValueRow(
                name=name,
                printed=" / ".join(
                    shown_value(book[s], None, name, yearly) for s in keys if s in book
                )
                if len(book_values) > 1
                else (book_values[0] if book_values else ""),
                cells=[shown_cell(by_seed, book, s, name, yearly) for s in keys],
                spread=over_seeds,
                reproduced=reproduced(checks.get(name, [])),
            )
        )
    return columns, rows


def measured_note(claim: dict) -> str:
    """Which of the claim's instances were reused from an earlier execution, and from when."""
    reused = [i["replayed"]["measured_at"] for i in claim["instances"] if i.get("replayed")]
    if not reused:
        return ""
    when = f"{min(reused)[:16].replace('T', ' ')} UTC"
    if max(reused) != min(reused):
        when += f" to {max(reused)[:16].replace('T', ' ')} UTC"
    runs = sorted(
        {i["replayed"].get("run") for i in claim["instances"] if i.get("replayed")} - {None, ""}
    )
    where = f" in {', '.join(runs)}" if runs else ""
    return (
        f"{len(reused)} of {len(claim['instances'])} instances reused from their execution of "
        f"{when}{where}: nothing they depend on changed since."
    )


def seed_range(seeds: list) -> str:
    """The seeds as words: "seeds 0 to 19" when consecutive, else "seeds 0, 2, 5"."""
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds {seeds[0]} to {seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))
