"""Where the repository is, for every room that reads or writes under it."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
