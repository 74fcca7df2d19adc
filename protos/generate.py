"""Regenerate the committed stubs from bench.proto: `python -m protos.generate`.

grpc_tools' own protoc writes the messages (`bench_pb2.py` and its `.pyi`), the grpcio stubs
(`bench_pb2_grpc.py`) and, through grpclib's plugin, the grpclib stubs (`bench_grpc.py`).
`--check` regenerates into a temporary directory and fails if the committed files differ.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO = Path("protos/bench/v1/bench.proto")
GENERATED = ("bench_pb2.py", "bench_pb2.pyi", "bench_pb2_grpc.py", "bench_grpc.py")


def generate(out_dir: Path) -> None:
    """Run protoc on bench.proto, writing the stubs under out_dir/protos/bench/v1."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plugin = Path(sys.executable).with_name("protoc-gen-python_grpc")
    well_known = resources.files("grpc_tools") / "_proto"
    argv = [
        "grpc_tools.protoc",
        f"--proto_path={ROOT}",
        f"--proto_path={well_known}",
        f"--plugin=protoc-gen-python_grpc={plugin}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--python_grpc_out={out_dir}",
        str(PROTO),
    ]
    if protoc.main(argv) != 0:
        raise RuntimeError(f"protoc failed on {PROTO}")


def stale_files() -> list[str]:
    """The generated files whose committed copy differs from a fresh generation."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        fresh, committed = Path(tmp) / PROTO.parent, ROOT / PROTO.parent
        return [
            name
            for name in GENERATED
            if not (committed / name).exists() or not filecmp.cmp(fresh / name, committed / name, shallow=False)
        ]


def main() -> int:
    """Regenerate in place, or with --check report stale stubs."""
    parser = argparse.ArgumentParser(prog="python -m protos.generate", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if committed stubs are stale")
    args = parser.parse_args()
    if args.check:
        stale = stale_files()
        if stale:
            print(f"stale generated stubs: {', '.join(stale)}; run `make protos`", file=sys.stderr)
            return 1
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        for name in GENERATED:
            shutil.copyfile(Path(tmp) / PROTO.parent / name, ROOT / PROTO.parent / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
