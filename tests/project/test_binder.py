"""The Binder set-up, checked offline: repo2docker would install ``binder/requirements.txt`` into
Python 3.11, and a fresh virtual environment made from that file alone runs every tutorial."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# pip's downloads and built wheels are kept between runs (the environment itself is made fresh each time)
PIP_CACHE = Path(tempfile.gettempdir()) / "trackerlab-binder-pip-cache"


def test_binder_files_name_python_311_and_the_package_itself():
    assert (BINDER / "runtime.txt").read_text(encoding="utf-8").strip() == "python-3.11"
    requirements = [
        line.split("#")[0].strip()
        for line in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.split("#")[0].strip()
    ]
    # the package with the extras the tutorials name (06 needs dask): nothing else to install
    assert requirements == [".[dask]"]


def test_the_readme_badge_opens_the_first_tutorial_in_jupyterlab():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# trackerlab\n\n```bash\n./dev lab ")
    badge = re.search(r"\(https://mybinder\.org/v2/gh/trackerlab/trackerlab/HEAD\?urlpath=lab/tree/([^)]+)\)", readme)
    assert badge, "no Binder badge in README.md"
    first = badge.group(1)
    assert first.startswith("notebooks/01_") and first.endswith(".en.ipynb")
    if NOTEBOOKS:
        assert (ROOT / first).is_file(), first


def test_the_readme_links_every_tutorial():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", readme))
    assert len(linked) >= 4
    assert NOTEBOOKS, "no tutorials in notebooks/"
    assert linked == {f"notebooks/{notebook.name}" for notebook in NOTEBOOKS}


@pytest.mark.slow
def test_repo2docker_would_install_binder_requirements_into_python_311():
    r2d = shutil.which(
        "jupyter-repo2docker", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    )
    if r2d is None:
        pytest.skip("jupyter-repo2docker is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [r2d, "--no-build", "--debug", str(ROOT)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-3000:]
    dockerfile = result.stdout + result.stderr
    assert "Building conda environment for python=3.11" in dockerfile
    install = '${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "binder/requirements.txt"'
    assert install in dockerfile
    # "." is local, so repo2docker installs after copying the whole repository, from its root
    assert dockerfile.index("COPY --chown=0:0 src/ ${REPO_DIR}/") < dockerfile.index(install)
    assert "WORKDIR ${REPO_DIR}" in dockerfile
    assert dockerfile.count("pip install") == 1  # nothing else installs packages (no postBuild, no environment.yml)


@pytest.fixture
def scratch():
    """A folder removed right after the test: a fresh environment weighs some 400 MB."""
    with tempfile.TemporaryDirectory(prefix="trackerlab-binder-", ignore_cleanup_errors=True) as folder:
        yield Path(folder)


@pytest.mark.slow
def test_a_fresh_environment_from_binder_requirements_runs_every_tutorial(scratch):
    assert NOTEBOOKS, "no tutorials in notebooks/"
    venv = scratch / "venv"
    python = venv / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "JUPYTER", "MPL"))}
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), env["PATH"]]),
        VIRTUAL_ENV=str(venv),
        JUPYTER_DATA_DIR=str(scratch / "jupyter"),
        JUPYTER_CONFIG_DIR=str(scratch / "jupyter-config"),
        IPYTHONDIR=str(scratch / "ipython"),
        PYTHONHASHSEED="0",
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "--cache-dir", str(PIP_CACHE)]
    # what Binder adds on top of the file: a kernel and nbconvert (its image has JupyterLab)
    install = subprocess.run(
        [*pip, "-r", "binder/requirements.txt", "nbconvert", "ipykernel"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr[-3000:]

    # the kernel is this environment's Python, whatever kernels the machine has installed
    spec = scratch / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "binder", "language": "python"}))
    # run the copies away from the repository, so only the installed trackerlab can be imported
    work = scratch / "notebooks"
    work.mkdir()
    for notebook in NOTEBOOKS:
        shutil.copy(notebook, work)
    copies = [str(work / notebook.name) for notebook in NOTEBOOKS]
    execute = [str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "--inplace"]
    execute += ["--ExecutePreprocessor.kernel_name=python3", "--ExecutePreprocessor.timeout=300"]
    # two at a time: most of the time goes into starting kernels and importing
    runs = [
        subprocess.Popen([*execute, *copies[half::2]], cwd=work, env=env, stderr=subprocess.PIPE, text=True)
        for half in (0, 1)
    ]
    for run in runs:
        _, stderr = run.communicate(timeout=900)
        assert run.returncode == 0, stderr[-5000:]
    where = subprocess.run(
        [str(python), "-c", "import trackerlab; print(trackerlab.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv)
    for copy in copies:
        executed = json.loads(Path(copy).read_text(encoding="utf-8"))
        code = [cell for cell in executed["cells"] if cell["cell_type"] == "code"]
        assert code and all(cell["execution_count"] for cell in code), copy
        assert executed["metadata"]["kernelspec"]["name"] == "python3"
