"""The documentation site: the vendored widget JavaScript, and the Sphinx build with `-W`."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "vendor"


def vendored_versions():
    """The versions vendor/README.md states, by npm package."""
    table = (VENDOR / "README.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `[^`]+\.js` \| `([^`]+)` \| ([0-9.]+) \|", table, flags=re.MULTILINE))


def test_vendored_files_are_the_versions_the_readme_states():
    versions = vendored_versions()
    assert set(versions) == {"requirejs", "@jupyter-widgets/html-manager"}
    require = (VENDOR / "requirejs" / "require.js").read_text(encoding="utf-8")
    assert f"@license RequireJS {versions['requirejs']} " in require
    embed = (VENDOR / "html-manager" / "embed-amd.js").read_text(encoding="utf-8")
    assert f'rE:"{versions["@jupyter-widgets/html-manager"]}"' in embed
    for module in ("base", "controls", "html-manager"):
        assert f'define("@jupyter-widgets/{module}"' in embed
    for licensed in ("requirejs/LICENSE", "html-manager/LICENSE", "html-manager/THIRD-PARTY-NOTICES.txt"):
        assert (VENDOR / licensed).stat().st_size > 500


def test_vendored_html_manager_speaks_the_installed_ipywidgets_protocol():
    from ipywidgets._version import __html_manager_version__, __protocol_version__

    # ipywidgets names a caret range of html-manager releases (`^1.0.1`) and widget protocol 2.x.
    wanted = tuple(int(part) for part in __html_manager_version__.lstrip("^").split("."))
    vendored = tuple(int(part) for part in vendored_versions()["@jupyter-widgets/html-manager"].split("."))
    assert vendored[0] == wanted[0] and vendored >= wanted
    assert __protocol_version__.split(".")[0] == "2"


def test_every_font_the_bundle_names_is_vendored():
    embed = (VENDOR / "html-manager" / "embed-amd.js").read_text(encoding="utf-8")
    fonts = set(re.findall(r"[0-9a-f]{20}\.woff2", embed))
    assert len(fonts) == 3
    assert fonts == {path.name for path in (VENDOR / "html-manager").glob("*.woff2")}
