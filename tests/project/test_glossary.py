"""One word for one idea: docs/glossary.md gives, for each term, the word each language uses and the variants
it does not; the tutorials (every cell's source) and the display catalogues (.po) follow it, and every tutorial
links to it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "docs" / "glossary.md"
LOCALE = ROOT / "trackerlab" / "notebook" / "locale"
TUTORIALS = sorted(
    p for p in (ROOT / "notebooks").glob("*.ipynb") if re.match(r"^\d\d_[a-z0-9_]+\.(en|ja|zh)\.ipynb$", p.name)
)


def glossary() -> dict[str, dict[str, tuple[str, list[str]]]]:
    """``{term: {language: (word, [variants not used])}}``, read from the glossary's tables."""
    terms: dict = {}
    term = None
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            term = line[3:].strip()
            terms[term] = {}
        row = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if term and len(row) == 4 and row[0] in ("en", "ja", "zh"):
            banned = [v.strip() for v in re.split(r",\s*(?![^/]*/$)", row[2]) if v.strip()]
            terms[term][row[0]] = (row[1], banned)
    return terms


def _pattern(variant: str) -> re.Pattern:
    """A variant as a pattern: ``/…/`` is a regular expression, anything else is literal."""
    return re.compile(variant[1:-1] if len(variant) > 2 and variant[0] == variant[-1] == "/" else re.escape(variant))


def _catalogue(language: str) -> list[tuple[str, str]]:
    with (LOCALE / language / "LC_MESSAGES" / "trackerlab.po").open("rb") as file:
        catalog = read_po(file)
    pairs = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        pairs += [(ids[0], s) for s in strings]
    return pairs


def test_the_glossary_has_every_term_in_three_languages():
    terms = glossary()
    wanted = {"sensitivity", "pullback", "backpropagator", "tape", "leaf", "pending", "ref", "Call", "node",
              "parameter", "gradient", "step", "stepper", "forward pass", "argument"}  # fmt: skip
    assert wanted <= set(terms), sorted(wanted - set(terms))
    for term, languages in terms.items():
        assert set(languages) == {"en", "ja", "zh"}, term
        assert all(word for word, _banned in languages.values()), term
    # the variants the glossary bans include the inconsistencies the read found
    assert "条带" in terms["tape"]["zh"][1] and "敏感度" in terms["sensitivity"]["zh"][1]
    assert "待ち状態" in terms["pending"]["ja"][1] and "逆伝播関数" in terms["pullback"]["ja"][1]
    assert {"单步演示器", "步进器控件"} <= set(terms["stepper"]["zh"][1]) and "前向计算" in terms["forward pass"]["zh"][
        1
    ]


def test_a_regular_expression_variant_matches_what_it_should():
    banned = glossary()["argument"]["zh"][1]
    found = [v for v in banned if any(_pattern(v).search(text) for text in ("第 1 个输入", "第 3、4 个输入"))]
    assert found and not any(_pattern(v).search("每个输入得到的正是另一个输入") for v in banned)


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.name for p in TUTORIALS])
def test_the_tutorials_use_the_glossarys_words(path):
    language = path.name.split(".")[-2]
    nb = nbformat.read(path, as_version=4)
    for term, languages in glossary().items():
        word, banned = languages[language]
        for variant in banned:
            for i, cell in enumerate(nb.cells):
                found = _pattern(variant).search(cell.source)
                assert not found, f"{path.name}: cell {i} says {found.group(0)!r}; the glossary's {term!r} is {word!r}"
    prose = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert "docs/glossary.md" in prose, f"{path.name}: link the glossary"


# The English words of the catalogues' messages that must come out as the glossary's word (its first part:
# `ref`（使用回数） is looked for as `ref`).
CHECKED_TERMS = ("sensitivity", "pullback", "tape", "leaf", "pending")


@pytest.mark.parametrize("language", ["ja", "zh"])
def test_the_display_catalogues_use_the_glossarys_words(language):
    terms = glossary()
    messages = _catalogue(language)
    for languages in terms.values():
        word, banned = languages[language]
        for variant in banned:
            for msgid, msgstr in messages:
                assert not _pattern(variant).search(msgstr), f"{language}: {msgid!r} says {variant!r}, not {word!r}"
    for term in CHECKED_TERMS:
        word = re.split(r"[（(]", terms[term][language][0])[0]
        uses = [(i, s) for i, s in messages if re.search(rf"\b{term}\b", i, re.I)]
        assert uses, term
        for msgid, msgstr in uses:
            assert word in msgstr, f"{language}: {msgid!r} is translated {msgstr!r}, without the glossary's {word!r}"
