"""Chapter 4, Step 2: why simple recurrent networks forget, and the LSTM's cell equations.

Nothing here trains. The gradient claim runs a plain tanh RNN (PyTorch's nn.RNN at its
default initialisation) and compares autograd's gradient with the product of the step
Jacobians computed by hand. The equation claim reads the chapter's key equation from the
text at run time, runs it as printed (LaTeX spelled as Python) with gates computed as the
next sentence describes, and compares it with PyTorch's nn.LSTM using the same weights.
"""

from __future__ import annotations

import torch
from claimbook import claim, source_text
from torch import nn

from tests.claims.sources import CH04

WIDTH, STEPS = 32, 100
FLOAT64 = 1e-12
EQUATION = r"c_t = f_t \odot c_{t-1}"  # how the key equation's line starts in the text


def plain_rnn(seed: int) -> nn.RNN:
    """A one-layer tanh RNN of width 32 at PyTorch's default initialisation, float64."""
    torch.manual_seed(seed)
    return nn.RNN(WIDTH, WIDTH, nonlinearity="tanh", batch_first=True).double()


def gradients_by_distance(rnn: nn.RNN, seed: int) -> tuple[list[float], float]:
    """Norm of d h_T / d x_{T-k} for k = 0..T-1 (autograd), and the largest gap between
    autograd's Jacobian at the farthest input and the product of the step Jacobians
    diag(1 - h_t^2) W_hh ... diag(1 - h_1^2) W_ih computed by hand, relative to its largest
    entry (both are tiny: an absolute gap would say nothing)."""
    x = torch.randn(1, STEPS, WIDTH, generator=torch.Generator().manual_seed(seed + 1),
                    dtype=torch.float64, requires_grad=True)  # fmt: skip
    states, _ = rnn(x)
    last = states[0, -1]
    jac = torch.stack([torch.autograd.grad(last[i], x, retain_graph=True)[0][0]
                       for i in range(WIDTH)])  # fmt: skip  # (out, T, in)
    norms = [jac[:, STEPS - 1 - k].norm().item() for k in range(STEPS)]
    h = states[0].detach()
    product = torch.diag(1 - h[0] ** 2) @ rnn.weight_ih_l0
    for t in range(1, STEPS):
        product = torch.diag(1 - h[t] ** 2) @ rnn.weight_hh_l0 @ product
    far = jac[:, 0]
    return norms, ((far - product).abs().max() / far.abs().max()).item()


@claim("ch04.rnn-gradient-vanishes", "established",
       at="the gradient through many steps is a long product of Jacobians that shrinks",
       printed={"gradient through many steps": "a long product of Jacobians that shrinks"},
       scope=f"a plain tanh RNN of width {WIDTH} at PyTorch's default initialisation, float64, "
       f"{STEPS} random inputs")  # fmt: skip
def test_a_plain_rnns_gradient_shrinks_with_distance(seed, measure):
    """In a plain tanh RNN, the gradient of the last state with respect to an input k steps
    back is the product of the k step Jacobians, and it shrinks with k: 100 steps back it is
    less than a thousandth of the gradient with respect to the last input."""
    norms, gap = gradients_by_distance(plain_rnn(seed), seed)
    measure("gradient norm 0, 33, 66 and 99 steps back", [norms[k] for k in (0, 33, 66, 99)])
    measure("autograd against the product of step Jacobians (relative)", gap)
    shrink = measure("farthest / nearest gradient norm", norms[-1] / norms[0])
    assert gap < 1e-9 and shrink < 1e-3


def lstm_equation(text: str) -> list[str]:
    """The chapter's key equation as Python statements: ``\\odot`` is ``*``, ``\\tilde c_t``
    the candidate, ``c_{t-1}`` the previous cell; its two parts split at ``\\qquad``."""
    (line,) = [ln for ln in text.splitlines() if EQUATION in ln]
    body = line.strip().strip("$").rstrip(". ")
    spelled = (body.replace(r"\tilde c_t", "c_cand").replace("c_{t-1}", "c_prev")
               .replace(r"\odot", "*").replace(r"\tanh", "tanh"))  # fmt: skip
    return [part.strip(" ,") for part in spelled.split(r"\qquad")]


def seeded_lstm(seed: int) -> tuple[nn.LSTM, torch.Tensor]:
    """PyTorch's nn.LSTM of width 32 (float64) and 20 random input steps, drawn in that order
    after seeding torch with ``seed``."""
    torch.manual_seed(seed)
    lstm = nn.LSTM(WIDTH, WIDTH, batch_first=True).double()
    return lstm, torch.randn(1, 20, WIDTH, dtype=torch.float64)


def run_printed_cell(code: list[str], lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """The hidden states of ``code`` (the printed equation as Python statements) run step by
    step on ``x``, with gates and candidate from ``lstm``'s weights: one linear layer of
    [h_{t-1}, x_t] each (nn.LSTM stacks them as i, f, candidate, o; its two biases add), a
    sigmoid for the gates and tanh for the candidate."""
    weight = torch.cat([lstm.weight_hh_l0, lstm.weight_ih_l0], 1)  # acts on [h_{t-1}, x_t]
    bias = lstm.bias_hh_l0 + lstm.bias_ih_l0
    h = c = torch.zeros(WIDTH, dtype=torch.float64)
    ours = []
    for t in range(x.shape[1]):
        i, f, g, o = (torch.cat([h, x[0, t]]) @ weight.T + bias).chunk(4)
        names = {"f_t": torch.sigmoid(f), "i_t": torch.sigmoid(i), "o_t": torch.sigmoid(o),
                 "c_cand": torch.tanh(g), "c_prev": c, "tanh": torch.tanh}  # fmt: skip
        for statement in code:
            exec(statement, names)
        h, c = names["h_t"], names["c_t"]
        ours.append(h)
    return torch.stack(ours)


def lstm_states(lstm: nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """nn.LSTM's own hidden states on ``x`` (one sequence), without gradients."""
    with torch.no_grad():
        return lstm(x)[0][0]


@claim("ch04.lstm-cell-equations", "established",
       at=(EQUATION, r"by a linear layer, with a sigmoid for the gates and tanh for the candidate"),
       printed={"cell update": "c_t = f_t c_{t-1} + i_t c~_t", "output": "h_t = o_t tanh(c_t)"},
       scope=f"PyTorch's nn.LSTM of width {WIDTH}, random weights and inputs, float64, 20 steps; "
       "the key equation read from the text and run as printed",
       remark="The gates f, i, o and the candidate are computed as the sentence after the "
       "equation says: one linear layer of [h_{t-1}, x_t] each, a sigmoid for the gates and tanh "
       "for the candidate (nn.LSTM keeps the four layers stacked, in the order i, f, candidate, o, "
       "and gives each two biases, which add).")  # fmt: skip
def test_lstm_cell_is_the_chapters_equation(seed, measure):
    """PyTorch's LSTM cell is the chapter's key equation: with gates and candidate from one
    linear layer of [h_{t-1}, x_t] each (sigmoid for the gates, tanh for the candidate),
    c_t = f_t * c_{t-1} + i_t * candidate and h_t = o_t * tanh(c_t), step after step."""
    code = lstm_equation(source_text(CH04))
    lstm, x = seeded_lstm(seed)
    ours, theirs = run_printed_cell(code, lstm, x), lstm_states(lstm, x)
    gap = measure("largest gap to nn.LSTM", (ours - theirs).abs().max().item())
    assert len(code) == 2 and gap < FLOAT64
