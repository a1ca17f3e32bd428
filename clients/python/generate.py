"""Generates the gRPC stubs in src/toolgate/v1/ from ../../proto with grpcio-tools.

    python generate.py          # write the stubs
    python generate.py --check  # exit 1 if the committed stubs differ from the proto files

Run it with the grpcio-tools version pinned in pyproject.toml's `dev` extra, so that the
output is byte for byte what is committed.
"""

import filecmp
import pathlib
import sys
import tempfile

from grpc_tools import protoc
import grpc_tools

HERE = pathlib.Path(__file__).resolve().parent
PROTO = HERE.parent.parent / "proto"
OUT = HERE / "src"
STUBS = OUT / "toolgate" / "v1"


def generate(out: pathlib.Path) -> None:
    includes = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "toolgate" / "v1").glob("*.proto"))
    code = protoc.main(
        ["protoc", f"-I{PROTO}", f"-I{includes}", f"--python_out={out}", f"--pyi_out={out}",
         f"--grpc_python_out={out}", *protos]
    )
    if code != 0:
        sys.exit(f"protoc failed with {code}")


def generated_files(root: pathlib.Path) -> list[str]:
    stubs = root / "toolgate" / "v1"
    return sorted(p.name for p in stubs.iterdir() if p.name.endswith((".py", ".pyi")) and "pb2" in p.name)


def main() -> None:
    if "--check" not in sys.argv:
        generate(OUT)
        return
    with tempfile.TemporaryDirectory() as tmp:
        fresh = pathlib.Path(tmp)
        generate(fresh)
        names = generated_files(fresh)
        differ = [n for n in names if not (STUBS / n).exists() or not filecmp.cmp(fresh / "toolgate" / "v1" / n, STUBS / n, shallow=False)]
        extra = sorted(set(generated_files(OUT)) - set(names))
        if differ or extra:
            sys.exit(f"stubs out of date (run `python generate.py`): {differ + extra}")
    print(f"stubs match the proto files ({len(names)} files)")


if __name__ == "__main__":
    main()
