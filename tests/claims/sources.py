"""The source documents whose claims this suite tests (declared in pyproject.toml)."""

from claimbook import source

CH04 = source("ch04")
DD2 = source("dd2")
