"""One version number: the library crate's (Cargo.toml), the binding crate's (python/Cargo.toml,
which maturin gives the Python package: pyproject.toml's version is dynamic) and the installed
module's ``__version__`` are equal; CHANGELOG.md has a section for it."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

import xla_shape as xs

ROOT = Path(__file__).resolve().parents[2]


def cargo_version(path: Path) -> str:
    with path.open("rb") as f:
        return str(tomllib.load(f)["package"]["version"])


def test_versions_are_one_number() -> None:
    library = cargo_version(ROOT / "Cargo.toml")
    assert cargo_version(ROOT / "python" / "Cargo.toml") == library
    assert xs.__version__ == library
    assert version("xla-shape") == library
    with (ROOT / "python" / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert "version" not in project
    assert project["dynamic"] == ["version"]


def test_the_changelog_has_a_section_for_the_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{xs.__version__}]" in text
