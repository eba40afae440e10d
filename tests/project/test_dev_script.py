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
    assert calls[-2] == "python -m pip install --quiet -e .[lab]"
    assert calls[-1].startswith("jupyter lab") and calls[-1].endswith("--no-browser notebooks/")

    log.unlink()
    again = run_dev(venv, "lab", "--no-browser")
    assert again.returncode == 0, again.stderr
    assert [c for c in log.read_text(encoding="utf-8").splitlines() if "pip" in c] == []

    log.unlink()
    forced = run_dev(venv, "lab", TRACKERLAB_REINSTALL="1")
    assert forced.returncode == 0, forced.stderr
    assert "python -m pip install --quiet -e .[lab]" in log.read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(os.name != "posix", reason="./dev is a bash script")
def test_a_changed_pyproject_or_another_extra_installs_again(tmp_path):
    venv, log = fake_venv(tmp_path)
    assert run_dev(venv, "lab").returncode == 0
    stamp = venv / ".trackerlab-lab"
    stamp.write_text("an older pyproject.toml\n", encoding="utf-8")
    log.unlink()
    assert run_dev(venv, "lab").returncode == 0
    assert "python -m pip install --quiet -e .[lab]" in log.read_text(encoding="utf-8").splitlines()
    assert not (venv / ".trackerlab-test").exists()  # the test extra is installed by its own command
