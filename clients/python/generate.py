"""Generates the gRPC stubs in src/toolgate_client/v1/ from ../../proto with grpcio-tools.

protoc names the modules after the proto files' path (`toolgate/v1/gate.proto`: `toolgate.v1`);
the stubs are moved under the package's own name, their imports and module names with them
(the protos' own names, `toolgate.v1.Gate`, stay what the wire says).

    python generate.py          # write the stubs
    python generate.py --check  # exit 1 if the committed stubs differ from the proto files

Run it with the grpcio-tools version pinned in pyproject.toml's `dev` extra, so that the
output is byte for byte what is committed.
"""

import filecmp
import pathlib
import re
import sys
import tempfile

from grpc_tools import protoc
import grpc_tools

HERE = pathlib.Path(__file__).resolve().parent
PROTO = HERE.parent.parent / "proto"
OUT = HERE / "src"
PACKAGE = "toolgate_client"
STUBS = OUT / PACKAGE / "v1"


def generate(out: pathlib.Path) -> None:
    """Writes the stubs into `out/toolgate_client/v1`."""
    includes = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(str(p.relative_to(PROTO)) for p in (PROTO / "toolgate" / "v1").glob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        code = protoc.main(
            ["protoc", f"-I{PROTO}", f"-I{includes}", f"--python_out={tmp}", f"--pyi_out={tmp}",
             f"--grpc_python_out={tmp}", *protos]
        )
        if code != 0:
            sys.exit(f"protoc failed with {code}")
        (out / PACKAGE / "v1").mkdir(parents=True, exist_ok=True)
        for stub in (pathlib.Path(tmp) / "toolgate" / "v1").iterdir():
            text = stub.read_text()
            text = text.replace("from toolgate.v1 import", f"from {PACKAGE}.v1 import")
            text = re.sub(r"'toolgate\.v1\.(\w+_pb2)'", rf"'{PACKAGE}.v1.\1'", text)
            (out / PACKAGE / "v1" / stub.name).write_text(text)


def generated_files(root: pathlib.Path) -> list[str]:
    stubs = root / PACKAGE / "v1"
    return sorted(p.name for p in stubs.iterdir() if p.name.endswith((".py", ".pyi")) and "pb2" in p.name)


def main() -> None:
    if "--check" not in sys.argv:
        generate(OUT)
        return
    with tempfile.TemporaryDirectory() as tmp:
        fresh = pathlib.Path(tmp)
        generate(fresh)
        names = generated_files(fresh)
        differ = [n for n in names if not (STUBS / n).exists() or not filecmp.cmp(fresh / PACKAGE / "v1" / n, STUBS / n, shallow=False)]
        extra = sorted(set(generated_files(OUT)) - set(names))
        if differ or extra:
            sys.exit(f"stubs out of date (run `python generate.py`): {differ + extra}")
    print(f"stubs match the proto files ({len(names)} files)")


if __name__ == "__main__":
    main()
