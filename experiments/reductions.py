"""The reductions a module performs, read off torch's own decomposition of it.

A module is traced with ``make_fx`` while torch's reference decompositions (``torch._decomp``)
break fused operators (``native_layer_norm``, ``var_mean``, ``mean``) into primitives, and
the reduction primitives of the graph are listed, each as what it reduces: a sum of squares
when its input is a square, else its own name ("sum", "var", ...).
"""

from __future__ import annotations

import torch
from torch import nn

REDUCTIONS = ("sum", "var", "mean", "std", "amax", "amin", "prod", "var_mean", "std_mean")


def _name(target) -> str:
    return str(target).split(".")[1]  # "prims.var.default" -> "var"


def _is_square(node) -> bool:
    if getattr(node, "op", "") != "call_function" or not node.args:
        return False
    square = _name(node.target) == "pow" and node.args[1:2] == (2,)
    return square or (_name(node.target) == "mul" and node.args[0] is node.args[1])


def reductions(module: nn.Module, x: torch.Tensor) -> list[str]:
    """The reductions ``module(x)`` performs, in order, once decomposed into primitives."""
    from torch._decomp import get_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx

    aten = torch.ops.aten
    table = get_decompositions([aten.native_layer_norm, aten.var_mean, aten.mean, aten.std_mean])
    graph = make_fx(module, decomposition_table=table)(x).graph
    found = []
    for node in graph.nodes:
        if node.op == "call_function" and _name(node.target) in REDUCTIONS:
            square = _name(node.target) == "sum" and _is_square(node.args[0])
            found.append("sum of squares" if square else _name(node.target))
    return found
