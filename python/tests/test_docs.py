"""The README's Python examples (its first screen, "From Python") and the example scripts run as
written."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "python" / "examples").glob("*.py"))


def readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text[
        text.index("## From Python") : text.index("\n## ", text.index("## From Python") + 1)
    ]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_first_screen_python_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first screen's Python block (before the first section) runs as written."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text[: text.index("\n## ")], re.S)
    assert len(blocks) == 1
    assert all(name in blocks[0] for name in ("Shape.parse", "relayout", "devices_indices_map"))
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "README.md", "exec"), {})


def test_readme_has_the_tasks() -> None:
    blocks = readme_blocks()
    assert len(blocks) == 5
    for name in ("from_numpy", "to_numpy", "relayout", "devices_indices_map", "HloModule"):
        assert any(name in b for b in blocks), name


def test_readme_python_blocks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for block in readme_blocks():
        exec(compile(block, "README.md", "exec"), namespace)


def test_there_is_an_example_per_task() -> None:
    assert {p.stem for p in EXAMPLES} >= {"shapes", "tpu_tiles", "int4", "shards", "hlo_module"}


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(
    script: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip(), "an example prints what it shows"
