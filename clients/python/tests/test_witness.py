"""The witness against a log written here from the C2SP texts alone: Python's `cryptography`
signs the checkpoints, urllib speaks the tlog-witness protocol, and the witness's cosignatures
are checked with `cryptography`'s (OpenSSL's) Ed25519 and ML-DSA-44, in both of C2SP
tlog-cosignature's forms. Nothing of toolgate's client is used."""

from __future__ import annotations

import base64
import hashlib
import struct
import subprocess
import urllib.error
import urllib.request

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from conftest import binary

DASH = "\u2014 "


def key_id(name: str, kind: int, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


def leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


class Log:
    """A log of a few leaves, signing checkpoints as C2SP signed-note says."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def verifier(self) -> str:
        kid = key_id(self.name, 0x01, self.public).hex()
        typed = base64.b64encode(bytes([0x01]) + self.public).decode()
        return f"{self.name}+{kid}+{typed}"

    def checkpoint(self, size: int, root: bytes) -> tuple[str, str]:
        text = f"{self.name}\n{size}\n{base64.b64encode(root).decode()}\n"
        sig = key_id(self.name, 0x01, self.public) + self.key.sign(text.encode())
        return text, f"{text}\n{DASH}{self.name} {base64.b64encode(sig).decode()}\n"


@pytest.fixture(params=["ed25519", "ml-dsa-44"])
def witness(tmp_path, request):
    key = tmp_path / "w.key"
    made = subprocess.run(
        [binary(), "keygen", "--witness", "--name", "witness.test/py", "--out", str(key),
         "--algorithm", request.param],
        check=True, capture_output=True, text=True,
    )
    log = Log("example.com/py-log")
    process = subprocess.Popen(
        [binary(), "witness", "serve", "--listen", "127.0.0.1:0", "--key", str(key),
         "--state", str(tmp_path / "w.db"), "--log", log.verifier()],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        url = process.stdout.readline().split()[-1]
        yield url, made.stdout.strip(), log
    finally:
        process.terminate()
        process.wait(timeout=10)


def post(url: str, body: str) -> tuple[int, str, str]:
    request = urllib.request.Request(url + "/add-checkpoint", data=body.encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


def check_cosignature(witness_key: str, text: str, line: str) -> int:
    name, kid, typed = witness_key.split("+", 2)
    public = base64.b64decode(typed)
    kind, public = public[0], public[1:]
    assert kind in (0x04, 0x06) and key_id(name, kind, public).hex() == kid
    assert line.startswith(f"{DASH}{name} ") and line.endswith("\n")
    blob = base64.b64decode(line.split(" ")[-1])
    assert blob[:4].hex() == kid
    (time,) = struct.unpack(">Q", blob[4:12])
    if kind == 0x04:
        message = f"cosignature/v1\ntime {time}\n{text}".encode()
        Ed25519PublicKey.from_public_bytes(public).verify(blob[12:], message)  # raises if bad
    else:
        # tlog-cosignature's ML-DSA-44 message: the label, the cosigner's name, the time, the
        # log's origin, the subtree [0, size) and its root, every length a byte.
        origin, size, root = text.splitlines()
        message = (
            b"subtree/v1\n\x00"
            + bytes([len(name)]) + name.encode()
            + struct.pack(">Q", time)
            + bytes([len(origin)]) + origin.encode()
            + struct.pack(">QQ", 0, int(size))
            + base64.b64decode(root)
        )
        assert len(public) == 1312 and len(blob) == 12 + 2420
        MLDSA44PublicKey.from_public_bytes(public).verify(blob[12:], message)  # raises if bad
    return time


def test_a_witness_cosigns_an_independent_log_and_refuses_its_fork(witness):
    url, witness_key, log = witness
    leaves = [leaf(b"first"), leaf(b"second")]

    text, note = log.checkpoint(1, leaves[0])
    status, _, body = post(url, f"old 0\n\n{note}")
    assert status == 200, body
    assert check_cosignature(witness_key, text, body) > 0

    # Size 2 with RFC 6962's consistency proof from 1: the first leaf is a power of two, so
    # the proof is the second leaf's hash alone.
    text, note = log.checkpoint(2, node(*leaves))
    proof = base64.b64encode(leaves[1]).decode()
    status, _, body = post(url, f"old 1\n{proof}\n\n{note}")
    assert status == 200, body
    check_cosignature(witness_key, text, body)

    # A client that does not know the witness's size learns it.
    status, content_type, body = post(url, f"old 0\n\n{note}")
    assert (status, content_type, body) == (409, "text/x.tlog.size", "2\n")

    # The same size with another root, signed by the same key: a fork, refused.
    _, forked = log.checkpoint(2, node(leaves[0], leaf(b"other")))
    status, _, _ = post(url, f"old 2\n\n{forked}")
    assert status == 409
    # Someone else's signature on the log's name: forbidden.
    _, impostor = Log(log.name).checkpoint(3, leaves[0])
    assert post(url, f"old 2\n\n{impostor}")[0] == 403
