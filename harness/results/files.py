"""Result files written whole or not at all (a temporary file renamed into place), read back as JSON, and
the schema every result file carries."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

SCHEMA = 3
READABLE_SCHEMAS = (1, 2, 3)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write path so that a reader sees the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as temporary:
        try:
            temporary.write(data)
            temporary.flush()
            os.fsync(temporary.fileno())
        except BaseException:
            os.unlink(temporary.name)
            raise
    os.replace(temporary.name, path)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())
