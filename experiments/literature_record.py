"""The field's record of the works and models the two sources cite: who, when, what.

This is data written from the published record (arXiv listings, proceedings, the
labs' release notes), not from either source: the attribution claims read each
citation from the text at run time and compare it with this table. ``year`` is the year
the field dates a work by (its first public version, for most the arXiv submission);
``venue_year`` is the year of its formal publication, which some authors cite instead,
so either is accepted. ``arxiv`` is None only for works that were never posted there
(the journal or report is then in ``venue``). ``known_for`` lists what the work is
credited with introducing, or, for a model, the design it is known for using.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Work:
    """One cited work as the field records it."""

    authors: tuple[str, ...]  # surnames, first author first (an organisation as one name)
    year: int
    title: str
    arxiv: str | None
    venue: str
    venue_year: int
    known_for: tuple[str, ...] = ()

    @property
    def years(self) -> set[int]:
        """The years a correct citation of this work may carry."""
        return {self.year, self.venue_year}


W = Work
WORKS: dict[str, Work] = {
    "lecun1989": W(("LeCun", "Boser", "Denker", "Henderson", "Howard", "Hubbard", "Jackel"),
                   1989, "Backpropagation Applied to Handwritten Zip Code Recognition", None,
                   "Neural Computation 1(4), doi:10.1162/neco.1989.1.4.541", 1989,
                   ("convolutional network", "LeNet")),
    "lecun1998": W(("LeCun", "Bottou", "Bengio", "Haffner"), 1998,
                   "Gradient-Based Learning Applied to Document Recognition", None,
                   "Proceedings of the IEEE 86(11), doi:10.1109/5.726791", 1998, ("LeNet",)),
    "krizhevsky2012": W(("Krizhevsky", "Sutskever", "Hinton"), 2012,
                        "ImageNet Classification with Deep Convolutional Neural Networks", None,
                        "NeurIPS (NIPS 25)", 2012, ("AlexNet",)),
    "simonyan2014": W(("Simonyan", "Zisserman"), 2014,
                      "Very Deep Convolutional Networks for Large-Scale Image Recognition",
                      "1409.1556", "ICLR", 2015, ("VGG",)),
    "szegedy2014": W(("Szegedy", "Liu", "Jia", "Sermanet", "Reed", "Anguelov", "Erhan",
                      "Vanhoucke", "Rabinovich"), 2014, "Going Deeper with Convolutions",
                     "1409.4842", "CVPR", 2015, ("Inception", "GoogLeNet")),
    "hochreiter1997": W(("Hochreiter", "Schmidhuber"), 1997, "Long Short-Term Memory", None,
                        "Neural Computation 9(8), doi:10.1162/neco.1997.9.8.1735", 1997,
                        ("LSTM",)),
    "cho2014": W(("Cho", "van Merrienboer", "Gulcehre", "Bahdanau", "Bougares", "Schwenk",
                  "Bengio"), 2014, "Learning Phrase Representations using RNN Encoder-Decoder "
                 "for Statistical Machine Translation", "1406.1078", "EMNLP", 2014,
                 ("seq2seq", "RNN encoder-decoder", "GRU")),
    "sutskever2014": W(("Sutskever", "Vinyals", "Le"), 2014,
                       "Sequence to Sequence Learning with Neural Networks", "1409.3215",
                       "NeurIPS (NIPS 27)", 2014, ("seq2seq",)),
    "bahdanau2014": W(("Bahdanau", "Cho", "Bengio"), 2014,
                      "Neural Machine Translation by Jointly Learning to Align and Translate",
                      "1409.0473", "ICLR", 2015, ("Bahdanau attention", "attention")),
    "vandenoord2016": W(("van den Oord", "Dieleman", "Zen", "Simonyan", "Vinyals", "Graves",
                         "Kalchbrenner", "Senior", "Kavukcuoglu"), 2016,
                        "WaveNet: A Generative Model for Raw Audio", "1609.03499",
                        "arXiv preprint", 2016, ("WaveNet", "dilated convolution")),
    "kalchbrenner2016": W(("Kalchbrenner", "Espeholt", "Simonyan", "van den Oord", "Graves",
                           "Kavukcuoglu"), 2016, "Neural Machine Translation in Linear Time",
                          "1610.10099", "arXiv preprint", 2016, ("ByteNet",)),
    "ba2016": W(("Ba", "Hinton", "Mnih", "Leibo", "Ionescu"), 2016,
                "Using Fast Weights to Attend to the Recent Past", "1610.06258",
                "NeurIPS (NIPS 29)", 2016, ("associative recall",)),
    "vaswani2017": W(("Vaswani", "Shazeer", "Parmar", "Uszkoreit", "Jones", "Gomez", "Kaiser",
                      "Polosukhin"), 2017, "Attention Is All You Need", "1706.03762",
                     "NeurIPS (NIPS 30)", 2017,
                     ("Transformer", "multi-head attention", "self-attention")),
    "radford2019": W(("Radford", "Wu", "Child", "Luan", "Amodei", "Sutskever"), 2019,
                     "Language Models are Unsupervised Multitask Learners", None,
                     "OpenAI technical report", 2019, ("GPT-2", "pre-norm")),
    "shazeer2019": W(("Shazeer",), 2019,
                     "Fast Transformer Decoding: One Write-Head is All You Need", "1911.02150",
                     "arXiv preprint", 2019, ("MQA", "multi-query attention")),
    "child2019": W(("Child", "Gray", "Radford", "Sutskever"), 2019,
                   "Generating Long Sequences with Sparse Transformers", "1904.10509",
                   "arXiv preprint", 2019, ("Sparse Transformer", "strided attention")),
    "clark2019": W(("Clark", "Khandelwal", "Levy", "Manning"), 2019,
                   "What Does BERT Look At? An Analysis of BERT's Attention", "1906.04341",
                   "BlackboxNLP workshop", 2019),
    "voita2019": W(("Voita", "Talbot", "Moiseev", "Sennrich", "Titov"), 2019,
                   "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy "
                   "Lifting, the Rest Can Be Pruned", "1905.09418", "ACL", 2019),
    "htut2019": W(("Htut", "Phang", "Bordia", "Bowman"), 2019,
                  "Do Attention Heads in BERT Track Syntactic Dependencies?", "1911.12246",
                  "arXiv preprint", 2019),
    "zhang2019": W(("Zhang", "Sennrich"), 2019, "Root Mean Square Layer Normalization",
                   "1910.07467", "NeurIPS", 2019, ("RMSNorm",)),
    "shazeer2020": W(("Shazeer",), 2020, "GLU Variants Improve Transformer", "2002.05202",
                     "arXiv preprint", 2020, ("SwiGLU",)),
    "beltagy2020": W(("Beltagy", "Peters", "Cohan"), 2020,
                     "Longformer: The Long-Document Transformer", "2004.05150",
                     "arXiv preprint", 2020, ("Longformer", "sliding-window attention")),
    "choromanski2020": W(("Choromanski", "Likhosherstov", "Dohan", "Song", "Gane", "Sarlos",
                          "Hawkins", "Davis", "Mohiuddin", "Kaiser", "Belanger", "Colwell",
                          "Weller"), 2020, "Rethinking Attention with Performers",
                         "2009.14794", "ICLR", 2021, ("Performer", "FAVOR+")),
    "dosovitskiy2020": W(("Dosovitskiy", "Beyer", "Kolesnikov", "Weissenborn", "Zhai",
                          "Unterthiner", "Dehghani", "Minderer", "Heigold", "Gelly",
                          "Uszkoreit", "Houlsby"), 2020, "An Image is Worth 16x16 Words: "
                         "Transformers for Image Recognition at Scale", "2010.11929", "ICLR",
                         2021, ("ViT", "Vision Transformer")),
    "elhage2021": W(("Elhage", "Nanda", "Olsson", "Henighan", "Joseph", "Mann", "Askell"),
                    2021, "A Mathematical Framework for Transformer Circuits", None,
                    "Transformer Circuits Thread (transformer-circuits.pub/2021/framework)",
                    2021, ("induction head",)),
    "su2021": W(("Su", "Lu", "Pan", "Murtadha", "Wen", "Liu"), 2021,
                "RoFormer: Enhanced Transformer with Rotary Position Embedding", "2104.09864",
                "Neurocomputing 568", 2024, ("RoPE", "rotary position embedding")),
    "gu2021": W(("Gu", "Goel", "Ré"), 2021,
                "Efficiently Modeling Long Sequences with Structured State Spaces",
                "2111.00396", "ICLR", 2022, ("S4", "state-space models")),
    "liu2021": W(("Liu", "Lin", "Cao", "Hu", "Wei", "Zhang", "Lin", "Guo"), 2021,
                 "Swin Transformer: Hierarchical Vision Transformer using Shifted Windows",
                 "2103.14030", "ICCV", 2021, ("Swin",)),
    "liu2022": W(("Liu", "Mao", "Wu", "Feichtenhofer", "Darrell", "Xie"), 2022,
                 "A ConvNet for the 2020s", "2201.03545", "CVPR", 2022, ("ConvNeXt",)),
    "dao2022": W(("Dao", "Fu", "Ermon", "Rudra", "Ré"), 2022, "FlashAttention: Fast and "
                 "Memory-Efficient Exact Attention with IO-Awareness", "2205.14135",
                 "NeurIPS", 2022, ("FlashAttention",)),
    "olsson2022": W(("Olsson", "Elhage", "Nanda", "Joseph", "DasSarma", "Henighan", "Mann"),
                    2022, "In-context Learning and Induction Heads", "2209.11895",
                    "Transformer Circuits Thread", 2022, ("induction head",)),
    "dao2023": W(("Dao",), 2023, "FlashAttention-2: Faster Attention with Better Parallelism "
                 "and Work Partitioning", "2307.08691", "ICLR", 2024,
                 ("FlashAttention-2", "Flash Attention 2")),
    "touvron2023": W(("Touvron", "Martin", "Stone"), 2023,
                     "Llama 2: Open Foundation and Fine-Tuned Chat Models", "2307.09288",
                     "arXiv preprint", 2023, ("LLaMA 2", "GQA")),
    "ainslie2023": W(("Ainslie", "Lee-Thorp", "de Jong", "Zemlyanskiy", "Lebron", "Sanghai"),
                     2023, "GQA: Training Generalized Multi-Query Transformer Models from "
                     "Multi-Head Checkpoints", "2305.13245", "EMNLP", 2023,
                     ("GQA", "grouped-query attention")),
    "jiang2023": W(("Jiang", "Sablayrolles", "Mensch"), 2023, "Mistral 7B", "2310.06825",
                   "arXiv preprint", 2023, ("Mistral 7B", "sliding-window attention")),
    "gu2023": W(("Gu", "Dao"), 2023,
                "Mamba: Linear-Time Sequence Modeling with Selective State Spaces", "2312.00752",
                "COLM", 2024, ("Mamba", "selective state space")),
    "arora2023": W(("Arora", "Eyuboglu", "Timalsina", "Johnson", "Poli", "Zou", "Rudra", "Ré"),
                   2023, "Zoology: Measuring and Improving Recall in Efficient Language "
                   "Models", "2312.04927", "ICLR", 2024, ("associative recall",)),
    "deepseek2024": W(("DeepSeek-AI",), 2024, "DeepSeek-V2: A Strong, Economical, and "
                      "Efficient Mixture-of-Experts Language Model", "2405.04434",
                      "arXiv preprint", 2024, ("MLA", "multi-head latent attention")),
    "jelassi2024": W(("Jelassi", "Brandfonbrener", "Kakade", "Malach"), 2024,
                     "Repeat After Me: Transformers are Better than State Space Models at "
                     "Copying", "2402.01032", "ICML", 2024),
    "lieber2024": W(("Lieber", "Lenz", "Bata"), 2024,
                    "Jamba: A Hybrid Transformer-Mamba Language Model", "2403.19887",
                    "arXiv preprint", 2024, ("Jamba",)),
    "gemma2024": W(("Gemma Team",), 2024, "Gemma 2: Improving Open Language Models at a "
                   "Practical Size", "2408.00118", "arXiv preprint", 2024, ("Gemma 2",)),
    # Llama 3 was released in April 2024; its paper followed in July 2024 (first author
    # Dubey in arXiv v1; later versions list Grattafiori first).
    "llama2024": W(("Dubey", "Jauhri", "Pandey"), 2024, "The Llama 3 Herd of Models",
                   "2407.21783", "arXiv preprint", 2024, ("LLaMA 3", "Llama 3")),
}  # fmt: skip

# Named systems a text may date without naming authors ("AlexNet, 2012"): name -> work.
SYSTEMS: dict[str, str] = {
    "LeNet": "lecun1998", "AlexNet": "krizhevsky2012", "VGG": "simonyan2014",
    "Inception": "szegedy2014", "LSTM": "hochreiter1997", "seq2seq": "sutskever2014",
    "Bahdanau attention": "bahdanau2014", "WaveNet": "vandenoord2016",
    "ByteNet": "kalchbrenner2016", "Transformer": "vaswani2017", "GPT-2": "radford2019",
    "MQA": "shazeer2019", "Longformer": "beltagy2020", "Performer": "choromanski2020",
    "ViT": "dosovitskiy2020", "Vision Transformer": "dosovitskiy2020",
    "Vision Transformer (ViT)": "dosovitskiy2020", "Swin": "liu2021", "S4": "gu2021",
    "ConvNeXt": "liu2022", "FlashAttention": "dao2022", "GQA": "ainslie2023",
    "Mistral 7B": "jiang2023", "Mamba": "gu2023", "MLA": "deepseek2024", "Jamba": "lieber2024",
    "Gemma 2": "gemma2024", "LLaMA 3": "llama2024", "LLaMA 2": "touvron2023",
    "Flash Attention 2": "dao2023",
}  # fmt: skip

# Names a lineage table uses for a family of works: the family's dates are its works'.
FAMILIES: dict[str, tuple[str, ...]] = {
    "Convolutional networks (LeNet)": ("lecun1989", "lecun1998"),
    "State-space models": ("gu2021",),
    "sliding windows": ("beltagy2020", "jiang2023"),
}


def squash(name: str) -> str:
    """A name compared without case, spaces, hyphens or a leading article."""
    return re.sub(r"[\s\-]", "", re.sub(r"^(the|a)\s+", "", name.strip(), flags=re.I)).lower()


def system(name: str) -> Work | None:
    """The work behind a named system or model ("AlexNet", "Mistral 7B"), if recorded."""
    key = {squash(k): v for k, v in SYSTEMS.items()}.get(squash(name))
    return WORKS[key] if key else None


def works_by(first_author: str) -> list[Work]:
    """Every recorded work whose first author has this surname."""
    return [w for w in WORKS.values() if w.authors[0] == first_author]


def credited_with(term: str) -> list[Work]:
    """Every recorded work credited with (or known for) ``term``."""
    return [w for w in WORKS.values() if squash(term) in {squash(k) for k in w.known_for}]


def _plain(title: str) -> str:
    return re.sub(r"[^a-z0-9]", "", title.lower())


def resolve(c) -> tuple[Work | None, list[str]]:
    """The recorded work a citation (:class:`experiments.text_tables.Citation`) names, and
    every way the citation disagrees with the record (who, when, what, title)."""
    if c.authors is None:
        w = system(c.name)
        if w is None:
            return None, [f"{c}: the record has no work or model named {c.name!r}"]
        bad = [] if c.year in w.years else [f"{c}: the record dates {c.name} {w.year} ({_ref(w)})"]
        return w, bad + _credit(c, w)
    by_first = works_by(c.authors[0])
    if not by_first:
        return None, [f"{c}: the record has no work with first author {c.authors[0]}"]
    dated = [w for w in by_first if c.year in w.years]
    if not dated:
        years = ", ".join(f"{w.year} ({_ref(w)})" for w in by_first)
        return by_first[0], [f"{c}: the record dates {c.authors[0]}'s work {years}"]
    fits = [w for w in dated if c.et_al or w.authors == c.authors] or dated
    w, bad = fits[0], []
    if c.et_al and len(w.authors) < 3:
        bad.append(f"{c}: 'et al.' for a work of {len(w.authors)} authors ({', '.join(w.authors)})")
    if not c.et_al and w.authors != c.authors:
        bad.append(f"{c}: the record's authors are {', '.join(w.authors)} ({_ref(w)})")
    bad += _credit(c, w)
    if c.title and not (_plain(c.title).startswith(_plain(w.title)) or
                        _plain(w.title).startswith(_plain(c.title))):  # fmt: skip
        bad.append(f"{c}: the record's title is {w.title!r}")
    return w, bad


def _credit(c, w: Work) -> list[str]:
    """Where the sentence opens with the thing cited ("The LSTM (...)", "(MQA; ...)"): the
    record must credit that thing to the cited work."""
    bad = []
    for what in filter(None, (c.subject, c.acronym)):
        if w not in credited_with(what):
            who = ", ".join(f"{x.authors[0]} {x.year}" for x in credited_with(what))
            bad.append(f"{c}: the record credits {what} to {who or 'no recorded work'}")
    return bad


def _ref(w: Work) -> str:
    return f"arXiv:{w.arxiv}" if w.arxiv else w.venue
