"""A quick run of the random-program gradient fuzzer (``scripts/fuzz_gradients.py``): 30 programs with
a fixed seed, each checked by ``gradient``, ``back_``, ``forward``, ``Params`` and, for a sample, second
derivatives, against central differences."""

import importlib.util
import pathlib

import numpy as np

_PATH = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "fuzz_gradients.py"
_spec = importlib.util.spec_from_file_location("fuzz_gradients", _PATH)
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)


def test_thirty_programs_agree_with_central_differences(capsys):
    assert fuzz.main(["--seed", "0", "--count", "30", "--second", "0.5"]) == 0
    out = capsys.readouterr().out
    checked = int(out.split(" programs checked")[0].split()[-1])
    assert checked >= 20, out


def test_a_one_percent_error_is_reported(monkeypatch):
    central = fuzz.central
    monkeypatch.setattr(fuzz, "central", lambda f, xs, step=1e-6: [g * 1.01 for g in central(f, xs, step)])
    results = [fuzz.check_one(seed, second=False) for seed in range(20)]
    failed = [r for r in results if r not in (None, "skip")]
    nonzero = [
        r for r in results if r is None
    ]  # programs whose gradient is 0 (the loss does not reach an input) agree with any scale
    assert len(failed) >= 10 and len(failed) >= 3 * len(nonzero), results


def test_central_differences_of_a_complex_input_follow_the_convention():
    # L = Re(z)² + 3 Im(z): the gradient is ∂L/∂x − i ∂L/∂y = 2x − 3i
    (g,) = fuzz.central(lambda z: np.real(z) ** 2 + 3 * np.imag(z), [np.array(1.5 + 0.5j)])
    assert np.allclose(g, 3.0 - 3.0j)
