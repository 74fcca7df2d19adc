"""Regenerate the committed stubs from bench.proto: `python -m protos.generate`.

grpc_tools' own protoc writes the messages (`bench_pb2.py` and its `.pyi`), the grpcio stubs
(`bench_pb2_grpc.py`), through grpclib's plugin the grpclib stubs (`bench_grpc.py`) and through connectrpc's
(protoc-gen-connectrpc, on the google protobuf classes) the Connect RPC stubs (`bench_connect.py`). Given the Go
plugins (`--go-plugins PROTOC_GEN_GO PROTOC_GEN_GO_GRPC`, pinned and built by `make protos`), it also
writes our Go driver's stubs (`loadgen/benchpb/`).
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
STUBS = ("bench_pb2.py", "bench_pb2.pyi", "bench_pb2_grpc.py", "bench_grpc.py", "bench_connect.py")
GENERATED = tuple(PROTO.parent / name for name in STUBS)
GO_MODULE = "github.com/grpc-python-bench/loadgen"
GENERATED_GO = (Path("loadgen/benchpb/bench.pb.go"), Path("loadgen/benchpb/bench_grpc.pb.go"))


def generate(out_dir: Path, go_plugins: tuple[Path, Path] | None = None) -> list[Path]:
    """Run protoc on bench.proto, writing the stubs under out_dir as they lie under the repository (the Go
    ones too, given protoc-gen-go and protoc-gen-go-grpc); returns their paths relative to out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plugins = Path(sys.executable).parent
    well_known = resources.files("grpc_tools") / "_proto"
    argv = [
        "grpc_tools.protoc",
        f"--proto_path={ROOT}",
        f"--proto_path={well_known}",
        f"--plugin=protoc-gen-python_grpc={plugins / 'protoc-gen-python_grpc'}",
        f"--plugin=protoc-gen-connectrpc={plugins / 'protoc-gen-connectrpc'}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--python_grpc_out={out_dir}",
        f"--connectrpc_out={out_dir}",
        "--connectrpc_opt=protobuf=google",
    ]
    generated = list(GENERATED)
    if go_plugins is not None:
        go_out = out_dir / "loadgen"
        go_out.mkdir(parents=True, exist_ok=True)
        package = f"M{PROTO.as_posix()}={GO_MODULE}/benchpb"
        for name, path in zip(("go", "go-grpc"), go_plugins, strict=True):
            argv += [
                f"--plugin=protoc-gen-{name}={path}",
                f"--{name}_out={go_out}",
                f"--{name}_opt=module={GO_MODULE}",
                f"--{name}_opt={package}",
            ]
        generated += GENERATED_GO
    if protoc.main([*argv, str(PROTO)]) != 0:
        raise RuntimeError(f"protoc failed on {PROTO}")
    return generated


def stale_files(go_plugins: tuple[Path, Path] | None = None) -> list[str]:
    """The generated files whose committed copy differs from a fresh generation."""
    with tempfile.TemporaryDirectory() as tmp:
        return [
            str(path)
            for path in generate(Path(tmp), go_plugins)
            if not (ROOT / path).exists() or not filecmp.cmp(Path(tmp) / path, ROOT / path, shallow=False)
        ]


def main() -> int:
    """Regenerate in place, or with --check report stale stubs."""
    parser = argparse.ArgumentParser(prog="python -m protos.generate", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if committed stubs are stale")
    parser.add_argument(
        "--go-plugins", nargs=2, type=Path, metavar=("PROTOC_GEN_GO", "PROTOC_GEN_GO_GRPC"), help="Go stubs too"
    )
    args = parser.parse_args()
    plugins = tuple(args.go_plugins) if args.go_plugins else None
    if args.check:
        stale = stale_files(plugins)
        if stale:
            print(f"stale generated stubs: {', '.join(stale)}; run `make protos`", file=sys.stderr)
            return 1
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in generate(Path(tmp), plugins):
            shutil.copyfile(Path(tmp) / path, ROOT / path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
