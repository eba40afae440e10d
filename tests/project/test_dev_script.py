"""`./dev`: pip runs only when the environment is new or pyproject.toml changed, so a complete .venv
starts at once and with no network; `./dev lab` opens the tutorials."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def fake_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A .venv whose python and jupyter only write down how they were called."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    for tool in ("python", "jupyter"):
        script = venv / "bin" / tool
        script.write_text(f'#!/usr/bin/env bash\necho "{tool} $*" >> "{log}"\n', encoding="utf-8")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return venv, log


def run_dev(venv: Path, *args, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, "TRACKERLAB_VENV": str(venv), **env}
    return subprocess.run([str(ROOT / "dev"), *args], capture_output=True, text=True, env=environment, timeout=60)


@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
def test_lab_installs_once_then_starts_without_pip(tmp_path):
    venv, log = fake_venv(tmp_path)
    first = run_dev(venv, "lab", "--no-browser")
    assert first.returncode == 0, first.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls[-2] == "python -m pip install -e .[lab]"
    assert calls[-1].startswith("jupyter lab") and calls[-1].endswith("--no-browser notebooks/")

    log.unlink()
    again = run_dev(venv, "lab", "--no-browser")
    assert again.returncode == 0, again.stderr
    assert [c for c in log.read_text(encoding="utf-8").splitlines() if "pip" in c] == []

    log.unlink()
    forced = run_dev(venv, "lab", TRACKERLAB_REINSTALL="1")
    assert forced.returncode == 0, forced.stderr
    assert "python -m pip install -e .[lab]" in log.read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
def test_a_changed_pyproject_or_another_extra_installs_again(tmp_path):
    venv, log = fake_venv(tmp_path)
    assert run_dev(venv, "lab").returncode == 0
    stamp = venv / ".trackerlab-lab"
    stamp.write_text("an older pyproject.toml\n", encoding="utf-8")
    log.unlink()
    assert run_dev(venv, "lab").returncode == 0
    assert "python -m pip install -e .[lab]" in log.read_text(encoding="utf-8").splitlines()
    assert not (venv / ".trackerlab-test").exists()  # the test extra is installed by its own command


@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
def test_the_first_start_says_what_it_is_doing_and_a_later_one_is_silent(tmp_path):
    venv, _log = fake_venv(tmp_path)
    first = run_dev(venv, "lab", "--no-browser")
    assert first.returncode == 0, first.stderr
    assert "dev: installing trackerlab with its [lab] extra" in first.stderr
    assert "dev: " in first.stderr.splitlines()[-1] and "is ready" in first.stderr
    again = run_dev(venv, "lab", "--no-browser")
    assert again.returncode == 0 and "installing" not in again.stderr


@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
def test_a_failed_install_fails_the_command_and_is_not_remembered(tmp_path):
    venv, log = fake_venv(tmp_path)
    python = venv / "bin" / "python"
    python.write_text(
        f'#!/usr/bin/env bash\necho "python $*" >> "{log}"\n'
        '[[ "$*" == *"-e ."* ]] && { echo "ERROR: no network" >&2; exit 1; }\nexit 0\n',
        encoding="utf-8",
    )
    failed = run_dev(venv, "lab", "--no-browser")
    assert failed.returncode != 0 and "ERROR: no network" in failed.stderr
    assert not (venv / ".trackerlab-lab").exists()
    assert not any(c.startswith("jupyter") for c in log.read_text(encoding="utf-8").splitlines())


def test_the_lab_extra_installs_what_every_tutorial_imports():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    names = {r.split("[")[0].split(">")[0].split("=")[0].strip() for r in extras["lab"]}
    for extra in ("dask",):  # the extras the tutorials need (tests/test_notebooks_meta.py: EXTRAS)
        for requirement in extras[extra]:
            assert requirement.split("[")[0].split(">")[0].strip() in names, f"./dev lab lacks {requirement}"


@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
def test_docs_builds_the_site_and_serves_it(tmp_path):
    venv, log = fake_venv(tmp_path)
    served = run_dev(venv, "docs", "--port", "8123")
    assert served.returncode == 0, served.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert "python -m pip install -e .[docs]" in calls
    assert calls[-2] == "python -m sphinx -W --keep-going -q -b html docs docs/_build/html"
    assert calls[-1] == "python -m http.server --bind 127.0.0.1 --directory docs/_build/html 8123"
    assert "http://localhost:8123/" in served.stderr

    log.unlink()
    built = run_dev(venv, "docs", "--build")
    assert built.returncode == 0, built.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [
        "python -m sphinx -W --keep-going -q -b html docs docs/_build/html"
    ]
    assert run_dev(venv, "docs", "--serve-forever").returncode == 2


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
@pytest.mark.skipif(os.environ.get("TRACKERLAB_OFFLINE") == "1", reason="TRACKERLAB_OFFLINE=1: pip cannot install")
def test_every_tutorial_runs_in_the_environment_dev_lab_makes(tmp_path):
    # A real environment, made by `./dev lab` as a newcomer's first start makes it; `jupyter lab --version`
    # stands in for opening JupyterLab. The translations run the same code as the English tutorials
    # (tests/test_notebooks_meta.py), so one language per tutorial shows that every import is there.
    venv = tmp_path / "lab-venv"
    environment = {**os.environ, "TRACKERLAB_VENV": str(venv)}
    made = subprocess.run(
        [str(ROOT / "dev"), "lab", "--version"], capture_output=True, text=True, env=environment, timeout=900
    )
    assert made.returncode == 0, made.stderr[-4000:]
    assert "dev: installing trackerlab with its [lab] extra" in made.stderr
    english = sorted(str(p) for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.en.ipynb"))
    assert len(english) >= 6
    ran = subprocess.run(
        [str(venv / "bin" / "python"), str(ROOT / "scripts" / "execute_notebooks.py"), "--check", *english],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1500,
    )
    assert ran.returncode == 0, ran.stderr[-6000:]
    assert ran.stdout.count(": runs (") == len(english), ran.stdout
