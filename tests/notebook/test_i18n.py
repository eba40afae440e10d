"""The notebook layer's text in Japanese and Chinese: ``tl.set_language`` picks the catalog, every message
the code asks for has a translation, and the repr, the stepper and the drawings speak the language."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markup import unstyled

import trackerlab as tl
from trackerlab.notebook import BackpropStepper, tape_svg
from trackerlab.notebook.html import html_repr

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("compile_catalogs", ROOT / "scripts" / "compile_catalogs.py")
catalogs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogs)


@pytest.fixture(autouse=True)
def english_after():
    yield
    tl.set_language("en")


def _example():
    a, b = tl.param(2.0), tl.param(3.0)
    return a, b, a * b + a


@pytest.mark.parametrize(
    ("code", "leaf", "made_by", "data", "values"),
    [
        ("en", "leaf", "made by", ">data<", "4 values on the tape"),
        ("ja", "葉ノード", "が生成", ">値<", "テープ上に 4 個の値"),
        ("zh", "叶节点", "由 ", ">数据<", "磁带上有 4 个值"),
    ],
)
def test_the_repr_speaks_the_language(code, leaf, made_by, data, values):
    tl.set_language(code)
    a, _b, y = _example()
    assert leaf in html_repr(a)
    page = html_repr(y)
    assert made_by in page and data in page and values in page
    assert (">勾配<" in page) == (code == "ja") and (">梯度<" in page) == (code == "zh")


FRAMES = {
    "en": [
        "step 3 of 4: a (a leaf)",
        "Δ arrived: 1.0 + 3.0 = 4.0  (used 2 times: from add#1, multiply#1)",
        "a.grad += 4.0",
        "pending: b = 2.0",
        "grads so far: a = 4.0",
    ],
    "ja": [
        "ステップ 3 / 4: a（葉ノード）",
        "届いた感度 Δ: 1.0 + 3.0 = 4.0  （2 回使用: add#1, multiply#1 から）",
        "a.grad += 4.0",
        "保留中: b = 2.0",
        "ここまでの勾配: a = 4.0",
    ],
    "zh": [
        "第 3 步，共 4 步：a（叶节点）",
        "到达的灵敏度 Δ：1.0 + 3.0 = 4.0  （被使用 2 次：来自 add#1, multiply#1）",
        "a.grad += 4.0",
        "待处理：b = 2.0",
        "目前的梯度：a = 4.0",
    ],
}


@pytest.mark.parametrize("code", sorted(FRAMES))
def test_a_stepper_frame_speaks_the_language(code):
    tl.set_language(code)
    a, b, y = _example()
    stepper = BackpropStepper(y, labels={a: "a", b: "b"})
    stepper.index = 2
    assert stepper.text.splitlines() == FRAMES[code]
    first = stepper._frames.text(0).splitlines()
    pullback = {"en": "the pullback of add sent:", "ja": "add のプルバックが送った感度:", "zh": "add 的拉回函数发出："}
    assert pullback[code] in first
    buttons = {"en": "next ▶", "ja": "次へ ▶", "zh": "下一步 ▶"}
    assert stepper.next_button.description == buttons[code]


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("en", ["parameter (leaf)", "operation", "pending", "waiting", "done", "current"]),
        ("ja", ["パラメータ（葉ノード）", "演算", "保留中", "待機", "完了", "処理中"]),
        ("zh", ["参数（叶节点）", "运算", "待处理", "等待", "已完成", "当前"]),
    ],
)
def test_the_drawings_legend_speaks_the_language(code, words, recwarn):
    tl.set_language(code)
    a, b, y = _example()
    states = {y: "done", y.tracker.f.args[0]: "current", a: "pending", b: "waiting"}
    svg = tape_svg(y, states=states)
    legend = svg[svg.index('id="legend"') :]
    for word in words:
        assert f">{word}<" in legend, word
    assert not [w for w in recwarn if "missing from font" in str(w.message)]


def test_the_check_tape_report_speaks_the_language():
    _a, _b, y = _example()
    report = tl.check_tape(y)
    tl.set_language("ja")
    assert repr(report).splitlines()[0] == "check_tape: 記録された 2 個の演算の規則はすべて有限差分と一致します"
    assert "相対誤差" in report._repr_html_()
    tl.set_language("zh")
    assert "记录的 2 个运算的规则都与有限差分一致" in repr(report)


def test_every_message_in_the_code_has_a_translation_in_both_catalogs():
    wanted = catalogs.messages()
    assert len(wanted) > 60 and "step {step} of {total}: {node} (a leaf)" in wanted
    for code in ("ja", "zh"):
        po = ROOT / "trackerlab" / "notebook" / "locale" / code / "LC_MESSAGES" / "trackerlab.po"
        with po.open("rb") as file:
            catalog = catalogs.read_po(file)
        translated = {m.id for m in catalog if m.id and all(m.string if isinstance(m.string, tuple) else [m.string])}
        assert wanted - translated == set(), code
        for message in catalog:  # the placeholders survive translation
            if message.id:
                ids = message.id if isinstance(message.id, tuple) else (message.id,)
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                for s in strings:
                    assert _fields(s) == _fields(ids[-1]), (code, message.id)
        assert catalogs.is_current(po), f"{code}: the .mo is stale"


def test_a_catalog_is_current_by_its_messages_not_the_bytes_a_babel_release_writes(tmp_path):
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    source = ROOT / "trackerlab" / "notebook" / "locale" / "ja" / "LC_MESSAGES" / "trackerlab.po"
    po = tmp_path / "trackerlab.po"
    po.write_bytes(source.read_bytes())
    with po.open("rb") as file:
        catalog = read_po(file)
    catalog.version = "9.9"  # header metadata only, as another Babel release's Generated-By line would be
    out = po.with_suffix(".mo")
    with out.open("wb") as file:
        write_mo(file, catalog)
    assert out.read_bytes() != catalogs.compiled(po)
    assert catalogs.is_current(po)
    message = next(m for m in catalog if m.id and isinstance(m.id, str) and m.string)
    message.string += "!"  # a translation that changed: the .mo no longer says what the .po says
    with out.open("wb") as file:
        write_mo(file, catalog)
    assert not catalogs.is_current(po)
    out.unlink()
    assert not catalogs.is_current(po)


def _fields(text: str) -> set:
    import string

    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_an_unknown_language_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match=r"set_language: unknown language 'fr'; choose one of 'en', 'ja', 'zh'"):
        tl.set_language("fr")
    with pytest.raises(ValueError, match="unknown language 3"):
        tl.set_language(3)
    tl.set_language("ja-JP")  # a region is accepted, and English is the default after
    assert tl.presentation.language.language() == "ja"


def test_set_language_does_not_import_the_notebook_layer_and_reads_the_environment():
    code = (
        "import sys, trackerlab as tl\n"
        "assert not [m for m in sys.modules if m.startswith('trackerlab.notebook')]\n"
        "from trackerlab.presentation.language import _, language\n"
        "print(language(), _('pending'))\n"
        "tl.set_language('en')\n"
        "assert not [m for m in sys.modules if m.startswith(('trackerlab.notebook', 'IPython', 'matplotlib'))]\n"
    )
    env = {"PYTHONPATH": str(ROOT), "TRACKERLAB_LANG": "zh"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.strip() == "zh 待处理"


def test_the_wheel_ships_the_compiled_catalogs():
    """hatch puts every file of the package directory in the wheel that git does not ignore."""
    import shutil
    import tomllib

    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["trackerlab"]
    assert not {"only-include", "exclude", "include"} & set(wheel), "check the catalogs still ship"
    mos = sorted((ROOT / "trackerlab" / "notebook" / "locale").glob("*/LC_MESSAGES/trackerlab.mo"))
    assert [p.parent.parent.name for p in mos] == ["ja", "zh"]
    if shutil.which("git") and (ROOT / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", *map(str, mos)], cwd=ROOT, capture_output=True, text=True)
        assert ignored.stdout == "", ignored.stdout


def test_no_catalog_keeps_a_message_the_code_no_longer_asks_for():
    wanted = catalogs.messages()
    for code in ("ja", "zh"):
        po = ROOT / "trackerlab" / "notebook" / "locale" / code / "LC_MESSAGES" / "trackerlab.po"
        with po.open("rb") as file:
            stale = {m.id for m in catalogs.read_po(file) if m.id} - wanted
        assert not stale, (code, stale)
    assert subprocess.run([sys.executable, str(ROOT / "scripts" / "compile_catalogs.py"), "--check"]).returncode == 0


@pytest.mark.parametrize(
    ("code", "labels", "words"),
    [
        ("en", ["first step", "last step"], ["previous step", "next step", "pause", "step {i} of {n}"]),
        (
            "ja",
            ["最初のステップ", "最後のステップ"],
            ["前のステップ", "次のステップ", "一時停止", "ステップ {i} / {n}"],
        ),
        ("zh", ["第一步", "最后一步"], ["上一步", "下一步", "暂停", "第 {i} 步，共 {n} 步"]),
    ],
)
def test_the_html_copy_of_the_stepper_speaks_the_language(code, labels, words):
    tl.set_language(code)
    a, b, y = _example()
    page = BackpropStepper(y, labels={a: "a", b: "b"}).to_html()
    shown = page[page.index('class="tl-static-view"') : page.index('class="tl-static-frames"')]
    found = [text for text in unstyled(shown).split('<div class="tl-static-label">')[1:]]
    assert [text[: text.index("</div>")] for text in found] == labels
    said = json.loads(re.search(r"words = (\{.*?\}), bar", page).group(1))
    assert [said[key] for key in ("previous", "next", "pause", "where")] == words
    if code != "en":
        for english in ("first step", "last step", "previous step", "next step", "step {i} of {n}"):
            assert english not in page, english


def test_the_summary_of_a_large_array_speaks_the_language():
    import numpy as np

    from trackerlab.notebook.common.tape import short

    tl.set_language("ja")
    page = html_repr(tl.param(np.linspace(-1.0, 1.0, 100_000)))
    assert 'title="有限な値のヒストグラム"' in page and "先頭: -1, -0.99998, -0.99996, …" in page
    assert short(np.full(500, np.nan)) == "すべて nan/inf"
    assert "先頭" not in html_repr(tl.param(np.arange(3.0)))  # small arrays are shown whole
