"""The tutorials as a set: named and numbered, translated, executed by the script, reproducible, portable.

nbval (configured in pyproject.toml) re-runs every notebook and compares its outputs; these tests
check what nbval cannot see: that each notebook exists in its languages, that the translations run the
same code, that the committed outputs were made by executing top to bottom, with fixed seeds, and that
nothing in them names a place on the machine that made them.
"""

import ast
import importlib.util
import io
import re
import sys
import tokenize
import tomllib
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

# Each tutorial, by number, and the languages it must exist in.
TUTORIALS = {
    "01": ("tracker_tutorial", {"en", "ja", "zh"}),
    "02": ("inside_the_tracker", {"en", "ja", "zh"}),
    "03": ("backprop_as_a_graph_walk", {"en", "ja", "zh"}),
    "04": ("training_a_small_model", {"en", "ja", "zh"}),
    "05": ("finding_a_wrong_gradient", {"en", "ja", "zh"}),
    "06": ("when_data_outgrows_memory", {"en", "ja", "zh"}),
    "07": ("a_small_cnn", {"en", "ja", "zh"}),
}
# The extras of pyproject.toml a tutorial needs besides the package itself (it says so in its first cell).
EXTRAS = {"06": ("dask",)}
NAME = re.compile(r"^(?P<number>\d\d)_(?P<topic>[a-z0-9]+(?:_[a-z0-9]+)*)\.(?P<language>en|ja|zh)\.ipynb$")
MACHINE_PATH = re.compile(
    r"(/home/\w|/root/|/Users/\w|/tmp/\w|/work/\w|/opt/\w|/usr/(?:lib|local)|site-packages|[A-Za-z]:\\\\\w|\\\\Users\\\\)"
)
MEMORY_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}")
KANA = re.compile(r"[\u3040-\u30ff]")
HAN = re.compile(r"[\u4e00-\u9fff]")

PATHS = sorted(path for path in NOTEBOOKS.glob("*.ipynb") if NAME.match(path.name))


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def _code_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def _without_comments(source: str) -> str:
    """The code of a cell with comments and blank lines removed (translations may comment differently), and
    the ``tl.set_language("ja")`` line a translation adds."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source + "\n").readline) if t.type != tokenize.COMMENT]
    code = tokenize.untokenize(tokens)
    lines = [line.rstrip() for line in code.splitlines() if line.strip()]
    return "\n".join(line for line in lines if not SET_LANGUAGE.fullmatch(line))


SET_LANGUAGE = re.compile(r'tl\.set_language\("(?P<language>[a-z]+)"\)')


def _texts(output) -> list[str]:
    """Every piece of text in an output (streams, text/* data, errors); images and widget JSON aside."""
    parts = [output.get("text", ""), output.get("ename", ""), output.get("evalue", ""), *output.get("traceback", [])]
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime.endswith("json"):
            parts.append(value if isinstance(value, str) else repr(value))
    return [p if isinstance(p, str) else "".join(p) for p in parts]


def _comparable(output) -> dict:
    """What nbval compares in an output (text and HTML), for comparing translations with each other: the
    kind of output and the numbers it shows (sorted: a language may say them in another order), since the
    words around them are in the notebook's language (``tl.set_language``) and an SVG's geometry follows
    the width of its words."""
    if output.output_type == "stream":
        return {"stream": output.name, "numbers": _numbers(output.text)}
    data = output.get("data", {})
    return {mime: _numbers(value) for mime, value in data.items() if mime in ("text/plain", "text/html")}


def _numbers(text) -> list[str]:
    text = text if isinstance(text, str) else "".join(text)
    text = re.sub(r"<style.*?</style>", "", text, flags=re.S)
    text = re.sub(r"<script.*?</script>", "", text, flags=re.S)  # the stepper's frames as data: shown elsewhere
    text = re.sub(r"<[^>]*>", " ", text)  # tags and their attributes (ids, coordinates) aside: the text shown
    return sorted(re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text))


def test_the_tutorials_are_all_there_in_their_languages():
    found: dict[str, dict[str, set[str]]] = {}
    for path in PATHS:
        match = NAME.match(path.name)
        assert match, f"{path.name}: name it NN_topic.LANG.ipynb (LANG one of en, ja, zh)"
        found.setdefault(match["number"], {}).setdefault(match["topic"], set()).add(match["language"])
    assert set(found) == set(TUTORIALS), "tutorial numbers differ from the list in this test"
    for number, (topic, languages) in TUTORIALS.items():
        assert found[number] == {topic: languages}, f"tutorial {number}: expected {topic} in {sorted(languages)}"
    numbers = sorted(int(n) for n in found)
    assert numbers == list(range(1, len(numbers) + 1)), "tutorials are numbered 01, 02, … without gaps"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_markdown_is_written_in_the_notebooks_language(path):
    language = NAME.match(path.name)["language"]
    prose = "\n".join(cell.source for cell in _read(path).cells if cell.cell_type == "markdown")
    assert len(prose) > 500, f"{path.name}: the notebook explains too little"
    if language == "ja":
        assert len(KANA.findall(prose)) > 200, f"{path.name}: the Japanese notebook's prose is not in Japanese"
    elif language == "zh":
        assert len(HAN.findall(prose)) > 200 and not KANA.search(prose), f"{path.name}: prose is not in Chinese"
    else:
        assert not KANA.search(prose) and len(HAN.findall(prose)) == 0, f"{path.name}: prose is not in English"


@pytest.mark.parametrize("number", [n for n, (_, langs) in TUTORIALS.items() if len(langs) > 1])
def test_translations_run_the_same_code_and_show_the_same_outputs(number):
    topic, languages = TUTORIALS[number]
    books = {lang: _read(NOTEBOOKS / f"{number}_{topic}.{lang}.ipynb") for lang in sorted(languages)}
    reference_language = "en"
    reference = _code_cells(books.pop(reference_language))
    for language, nb in books.items():
        cells = _code_cells(nb)
        assert len(cells) == len(reference), f"{number}.{language}: {len(cells)} code cells, en has {len(reference)}"
        for i, (cell, ref) in enumerate(zip(cells, reference), start=1):
            assert _without_comments(cell.source) == _without_comments(ref.source), (
                f"{number}.{language}: code cell {i} differs from the English notebook's"
            )
            assert [_comparable(o) for o in cell.outputs] == [_comparable(o) for o in ref.outputs], (
                f"{number}.{language}: the outputs of code cell {i} differ from the English notebook's; "
                "re-run scripts/execute_notebooks.py"
            )


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_each_translation_sets_its_own_language_and_english_none(path):
    language = NAME.match(path.name)["language"]
    cells = _code_cells(_read(path))
    calls = [m.group(1) for cell in cells for m in re.finditer(r"set_language\((.*?)\)", cell.source)]
    assert calls == ([] if language == "en" else [f'"{language}"']), (
        f"{path.name}: its first code cell should call tl.set_language({language!r}) once (English: never)"
    )
    if language != "en":
        assert SET_LANGUAGE.search(cells[0].source), f"{path.name}: set the language in the first code cell"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_outputs_were_made_by_running_the_notebook_top_to_bottom(path):
    nb = _read(path)
    cells = _code_cells(nb)
    counts = [cell.execution_count for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts}; run scripts/execute_notebooks.py to make the outputs"
    )
    assert nb.metadata.kernelspec.name == "python3"
    with_output = [cell for cell in cells if cell.outputs]
    assert len(with_output) >= len(cells) // 2, f"{path.name}: most code cells should show something"
    for i, cell in enumerate(cells, start=1):
        assert all(o.output_type != "error" for o in cell.outputs), f"{path.name}: code cell {i} raised"
        assert "execution" not in cell.metadata, f"{path.name}: code cell {i} keeps timings"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_widgets_render_without_a_kernel(path):
    """Every widget view is followed, in its cell, by the stepper's self-contained HTML copy, which every page
    without a kernel shows; no widget state is saved, so nbconvert never exports a view that needs a CDN."""
    nb = _read(path)
    assert "widgets" not in nb.metadata, f"{path.name}: widget state saved; run scripts/execute_notebooks.py"
    for i, cell in enumerate(_code_cells(nb), start=1):
        outputs = [o for o in cell.outputs if "data" in o]
        for k, output in enumerate(outputs):
            if "application/vnd.jupyter.widget-view+json" not in output.data:
                continue
            assert "text/plain" in output.data, f"{path.name}: cell {i}: a widget without a text form for nbval"
            copy = outputs[k + 1].data.get("text/html", "") if k + 1 < len(outputs) else ""
            assert 'class="tl-static-stepper"' in copy, f"{path.name}: cell {i}: a widget without its HTML copy"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_random_numbers_come_from_fixed_seeds(path):
    code = "\n".join(cell.source for cell in _code_cells(_read(path)))
    assert not re.search(r"np\.random\.(?!default_rng\b)\w+\(", code), f"{path.name}: use np.random.default_rng(SEED)"
    assert not re.search(r"default_rng\(\s*\)", code), f"{path.name}: default_rng() needs a fixed seed"
    assert not re.search(r"^\s*import random\b|^\s*from random import", code, re.M), f"{path.name}: use default_rng"
    for call in re.findall(r"train_test_split\([^)]*\)", code, re.S):
        assert re.search(r"random_state\s*=\s*\d+", call), f"{path.name}: train_test_split needs random_state"
    assert not re.search(r"\b(time\.time|perf_counter|datetime\.now)\(", code), f"{path.name}: prints a clock"


# Distribution names whose import name is not the name itself with "-" as "_".
IMPORT_NAMES = {"ipython": "IPython"}


def _installed_with_the_package(extras=()) -> set[str]:
    """The modules that installing trackerlab (with ``extras``) brings: its own, its dependencies', and the
    standard library's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dependencies = list(project["dependencies"])
    for extra in extras:
        assert extra in project.get("optional-dependencies", {}), f"pyproject.toml has no {extra!r} extra"
        dependencies += project["optional-dependencies"][extra]
    names = {re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower() for requirement in dependencies}
    return {"trackerlab", *sys.stdlib_module_names, *(IMPORT_NAMES.get(n, n.replace("-", "_")) for n in names)}


def _imported(source: str) -> set[str]:
    """The top-level modules a code cell imports (IPython's magics and shell lines left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    modules = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            modules.add(node.module.split(".")[0])
    return modules


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_a_tutorial_needs_nothing_that_installing_trackerlab_does_not_install(path):
    # `pip install trackerlab-ad`, then open any tutorial: no "No module named ..." in any cell; a tutorial
    # that needs an extra says so in its first cell, as `pip install "trackerlab-ad[extra] @ ..."`
    extras = EXTRAS.get(path.name[:2], ())
    allowed = _installed_with_the_package(extras)
    nb = _read(path)
    for extra in extras:
        assert f'pip install "trackerlab-ad[{extra}] @ ' in nb.cells[0].source, f"{path.name}: say it needs [{extra}]"
    for i, cell in enumerate(_code_cells(nb), start=1):
        missing = _imported(cell.source) - allowed
        assert not missing, f"{path.name}: code cell {i} imports {sorted(missing)}, which trackerlab does not install"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_nothing_names_the_machine_that_ran_it(path):
    nb = _read(path)
    for i, cell in enumerate(nb.cells, start=1):
        for text in [cell.source, *(t for o in cell.get("outputs", []) for t in _texts(o))]:
            found = MACHINE_PATH.search(text) or MEMORY_ADDRESS.search(text)
            assert not found, f"{path.name}: cell {i} mentions {found.group(0)!r}"
    metadata = str(nb.metadata)
    assert not MACHINE_PATH.search(metadata), f"{path.name}: the metadata names a machine path"
    assert "version" not in nb.metadata.get("language_info", {}), f"{path.name}: the Python version is recorded"


def test_the_test_command_runs_nbval_over_the_notebooks():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "notebooks" in options["testpaths"]
    addopts = options["addopts"].split()
    assert "--nbval" in addopts, "every cell's output is compared, not only marked ones"
    sanitize = [o.split("=", 1)[1] for o in addopts if o.startswith("--nbval-sanitize-with=")]
    assert sanitize and (ROOT / sanitize[0]).is_file()
    patterns = re.findall(r"^regex: (.*)$\n^replace: (.*)$", (ROOT / sanitize[0]).read_text(), re.M)
    assert patterns, "the sanitize file holds regex/replace pairs"
    for regex, _ in patterns:
        re.compile(regex)


def _execution_script():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_execution_script_strips_machine_paths_and_fixes_the_kernel_metadata():
    script = _execution_script()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "my-own-env", "display_name": "mine", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.7", "pygments_lexer": "ipython3"}
    cell = nbformat.v4.new_code_cell("print(paths)")
    cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=f"{ROOT}/trackerlab/api.py\n{NOTEBOOKS}/data.csv\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": f"'{sys.prefix}'"}, execution_count=1),
    ]
    nb.cells.append(cell)

    assert script.normalise(nb) == []
    assert cell.outputs[0].text == "trackerlab/api.py\ndata.csv\n"
    assert cell.outputs[1].data["text/plain"] == "'<python>'"
    assert "execution" not in cell.metadata
    assert nb.metadata.kernelspec == {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    assert nb.metadata.language_info == {"name": "python", "pygments_lexer": "ipython3"}

    # what cannot be made portable is reported (and the notebook is then not written)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="saved to /home/someone/model.npz\n")]
    assert script.normalise(nb) == ["cell 0: output mentions '/home/'"]


def test_a_notebook_of_your_own_is_neither_a_test_nor_a_page(tmp_path):
    """`./dev lab` opens notebooks/: a new Untitled.ipynb there must not be run by nbval or published."""
    import subprocess

    book = nbformat.v4.new_notebook()
    book.cells.append(nbformat.v4.new_code_cell("1 + 1"))
    (tmp_path / "conftest.py").write_text((NOTEBOOKS / "conftest.py").read_text(encoding="utf-8"), encoding="utf-8")
    for name in ("Untitled.ipynb", "my_experiment.ipynb", "01_tracker_tutorial.en.ipynb"):
        nbformat.write(book, tmp_path / name)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    collected = result.stdout
    assert "01_tracker_tutorial.en.ipynb::Cell 0" in collected, collected + result.stderr
    assert "Untitled" not in collected and "my_experiment" not in collected

    spec = importlib.util.spec_from_file_location("docs_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    (tmp_path / "notebooks").mkdir()
    for name in ("Untitled.ipynb", "02_inside_the_tracker.zh.ipynb"):
        nbformat.write(book, tmp_path / "notebooks" / name)
    assert conf.own_notebooks(tmp_path) == ["notebooks/Untitled.ipynb"]
    assert all(NAME.match(path.name) for path in NOTEBOOKS.glob("*.ipynb") if conf.TUTORIAL.match(path.name))
