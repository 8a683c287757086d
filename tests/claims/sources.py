"""The source documents whose claims this suite tests."""

from claimbook import Source

CH04 = Source(
    id="ch04",
    title="Token mixing: from convolution and recurrence to attention (chapter 4)",
    document="chapter 4 of a Transformer book (Part II)",
    path="000_6d944b984c8dab64.txt",
)

DD2 = Source(
    id="dd2",
    title="Attention mechanisms in large language models: a deep dive, part 2",
    document="an article on attention internals",
    path="001_4c9decde5873da15.txt",
)
