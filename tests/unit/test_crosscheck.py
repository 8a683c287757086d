"""The distribution-free cross-check: an exact sign-flip test beside the t test from 6 seeds,
a warning where they disagree at the claim's alpha, the verdict never changed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from claimbook.declare.design import Beats, Matches, MostSeeds, Typical, Universal
from claimbook.judge.crosscheck import crosscheck, lines, sign_flip_p
from claimbook.render.evidence_view import evidence_view

from tests.unit.conftest import claim_of

SKEWED = [0.1, 0.1, 0.1, 0.1, 0.1, 3.0]  # one large seed: t p 0.14, sign-flip p 1/64


def test_hand_computed_sign_flip_p_values():
    assert sign_flip_p([1, 2, 3, 4, 5, 6]) == 1 / 64  # only the all-plus pattern reaches 21
    assert sign_flip_p([1, 1, 1, 1, 1, -1]) == 7 / 64  # sum >= 4: no sign or one ones' flipped
    assert sign_flip_p([1, 2, 3, 4, 5, 6], "less") == 1.0
    assert sign_flip_p(SKEWED) == 1 / 64  # the 3.0 and every 0.1 positive


@pytest.mark.parametrize("n", [6, 9, 13])
def test_the_enumeration_is_scipys_exact_permutation_test(n):
    y = np.random.default_rng(n).normal(0.4, 1.0, n)
    for side in ("greater", "less"):
        exact = scipy.stats.permutation_test(
            (y,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative=side
        ).pvalue
        assert sign_flip_p(y, side) == pytest.approx(exact, abs=1e-12)


def test_a_skewed_sample_disagrees_and_gets_a_warning():
    check = crosscheck(Typical("x", above=0), 0.05, {"x": SKEWED}, 6)
    claimed = check["parts"][0]["sides"][0]
    assert claimed["sign_flip_p"] == 1 / 64 and 0.14 < claimed["t_p"] < 0.15
    assert check["disagree"] and lines(check)[0].startswith("WARNING: the sign-flip test")
    calm = crosscheck(Typical("x", above=0), 0.05, {"x": [1, 2, 3, 4, 5, 6]}, 6)
    assert not calm["disagree"]  # t p 0.0025 and sign-flip p 1/64: both below 0.05


def test_below_six_seeds_nothing_is_checked():
    assert crosscheck(Typical("x", above=0), 0.05, {"x": [1, 2, 3, 4, 5]}, 5) is None


def test_a_comparison_and_an_equivalence_test_their_own_hypotheses():
    loss = {"A": [1.0] * 6, "B": [1.1, 1.2, 1.3, 1.4, 1.5, 1.6]}  # A lower in every seed
    (part,) = crosscheck(Beats("A", "B"), 0.05, loss, 6)["parts"]
    assert part["sides"][0]["sign_flip_p"] == 1 / 64  # B - A > 0: all six positive
    near = {"A": [1.0] * 6, "B": [1.001, 0.999, 1.002, 0.998, 1.001, 0.999]}
    sides = crosscheck(Matches("A", "B", margin=0.1), 0.05, near, 6)["parts"][0]["sides"]
    assert [s["test"] for s in sides[:2]] == ["above -margin (TOST)", "below +margin (TOST)"]
    assert sides[0]["sign_flip_p"] == sides[1]["sign_flip_p"] == 1 / 64


def test_success_counts_and_universal_rules_say_what_is_exact():
    count = crosscheck(MostSeeds("x", above=0), 0.05, {"x": [1] * 6}, 6)
    assert "already exact" in count["parts"][0]["note"] and not count["disagree"]
    every = crosscheck(Universal("x", above=0), 0.05, {"x": [1] * 6}, 6)
    assert "at least 61% of seeds pass at 95% confidence" in every["parts"][0]["note"]
    failed = crosscheck(Universal("x", above=0), 0.05, {"x": [1] * 5 + [-1]}, 6)
    assert "refuted by a failing seed (1 of 6)" in failed["parts"][0]["note"]


SKEWED_CLAIM = """
from claimbook import Typical

@claim(id="doc.skewed", level="likely", source=DOC, section="1", rule=Typical("x", above=0))
def test_skewed(seed, measure):
    '''The value is positive on average over seeds.'''
    measure("x", 3.0 if seed == 5 else 0.1)
"""


def test_the_page_shows_the_cross_check_and_the_verdict_stays(claims_project):
    result, data = claims_project(SKEWED_CLAIM, "--claimbook-seeds", "0,1,2,3,4,5")
    claim = claim_of(data, "doc.skewed")
    assert claim["verdict"] == "inconclusive", result.stdout.str()  # the t test's, unchanged
    assert claim["statistics"]["crosscheck"]["disagree"]
    facts = dict(evidence_view(claim).facts)
    assert "the sign-flip test and the t test disagree" in facts["assumption warning"]
    said = facts["distribution-free cross-check"]
    assert "on the 6 seeds read" in said and "it never changes the verdict" in said
    assert "claimed side: sign-flip p 0.0156, t p 0.141 (disagree)" in said
