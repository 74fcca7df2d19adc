"""The wire a run's servers speak: plaintext, TLS or mutual TLS, with a throwaway CA made for the run.

`make_certificates` issues, with trustme, a CA, a server certificate for 127.0.0.1 and localhost and a client
certificate, as PEM files in a directory of the caller's (a run's temporary directory: never committed, never
reused). A `Wire` hands each side what it needs: the server its flags (`servers.common.TlsFiles`), a gRPC client
its channel credentials, an HTTP client its SSL context.
"""

from __future__ import annotations

import datetime
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc
import trustme

from harness.plan.wires import MTLS, PLAINTEXT, TLS
from servers.common import TlsFiles

SERVER_NAMES = ("localhost", "127.0.0.1")  # what the server certificate names: a client may dial either
CLIENT_NAME = "bench-client"


@dataclass(frozen=True)
class Certificates:
    """A CA and the certificates it issued, as PEM files."""

    ca: Path
    server_chain: Path
    server_key: Path
    client_chain: Path
    client_key: Path
    key_type: str  # "ECDSA" (P-256) or "RSA" (2048 bits): trustme's two


def _write(path: Path, pem: bytes) -> Path:
    path.write_bytes(pem)
    path.chmod(0o600)
    return path


def make_certificates(
    directory: Path,
    key_type: trustme.KeyType = trustme.KeyType.ECDSA,
    *,
    ca: trustme.CA | None = None,
    expired: bool = False,
) -> Certificates:
    """A fresh CA (or the one given), a server and a client certificate under directory; expired: certificates
    that ended a day ago (the CA still valid), for the tests of a refused handshake."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = ca or trustme.CA(key_type=key_type)
    begins = ends = None  # trustme's defaults: valid from now on
    if expired:
        now = datetime.datetime.now(datetime.UTC)
        begins, ends = now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)
    server = ca.issue_cert(*SERVER_NAMES, key_type=key_type, not_before=begins, not_after=ends)
    client = ca.issue_cert(CLIENT_NAME, key_type=key_type, not_before=begins, not_after=ends)
    return Certificates(
        ca=_write(directory / "ca.pem", ca.cert_pem.bytes()),
        server_chain=_write(directory / "server.pem", b"".join(blob.bytes() for blob in server.cert_chain_pems)),
        server_key=_write(directory / "server.key", server.private_key_pem.bytes()),
        client_chain=_write(directory / "client.pem", b"".join(blob.bytes() for blob in client.cert_chain_pems)),
        client_key=_write(directory / "client.key", client.private_key_pem.bytes()),
        key_type=key_type.name,
    )


@dataclass(frozen=True)
class Wire:
    """Plaintext (no certificates), TLS, or mutual TLS (the client presents its certificate too)."""

    certificates: Certificates | None = None
    mutual: bool = False

    def __post_init__(self) -> None:
        if self.mutual and self.certificates is None:
            raise ValueError("mutual TLS needs certificates")

    @property
    def name(self) -> str:
        return PLAINTEXT if self.certificates is None else MTLS if self.mutual else TLS

    def server_files(self) -> TlsFiles | None:
        """What the server is started with (None: plaintext)."""
        found = self.certificates
        if found is None:
            return None
        return TlsFiles(found.server_chain, found.server_key, found.ca if self.mutual else None)

    def grpc_credentials(self) -> grpc.ChannelCredentials | None:
        """A gRPC client's channel credentials (None: an insecure channel)."""
        found = self.certificates
        if found is None:
            return None
        if not self.mutual:
            return grpc.ssl_channel_credentials(root_certificates=found.ca.read_bytes())
        return grpc.ssl_channel_credentials(
            root_certificates=found.ca.read_bytes(),
            private_key=found.client_key.read_bytes(),
            certificate_chain=found.client_chain.read_bytes(),
        )

    def channel(self, target: str) -> grpc.Channel:
        """A gRPC channel to target over this wire."""
        credentials = self.grpc_credentials()
        return grpc.insecure_channel(target) if credentials is None else grpc.secure_channel(target, credentials)

    def ssl_context(self) -> ssl.SSLContext | None:
        """An HTTP client's context (None: plaintext), trusting the run's CA only."""
        found = self.certificates
        if found is None:
            return None
        context = ssl.create_default_context(cafile=found.ca)
        if self.mutual:
            context.load_cert_chain(found.client_chain, found.client_key)
        return context

    def client_flags(self, dashes: str) -> list[str]:
        """A command-line client's flags for this wire, as ghz (dashes "--") and loadgen ("-") name them:
        cacert, and cert and key under mutual TLS; none for plaintext."""
        found = self.certificates
        if found is None:
            return []
        flags = [f"{dashes}cacert", str(found.ca)]
        if self.mutual:
            flags += [f"{dashes}cert", str(found.client_chain), f"{dashes}key", str(found.client_key)]
        return flags

    @property
    def scheme(self) -> str:
        return "http" if self.certificates is None else "https"


PLAIN = Wire()


def negotiated(target: str, wire: Wire) -> str:
    """What a handshake with the server at target settles, as "TLSv1.3 TLS_AES_128_GCM_SHA256, h2" (protocol,
    cipher suite, ALPN); "" for plaintext."""
    context = wire.ssl_context()
    if context is None:
        return ""
    context.set_alpn_protocols(["h2", "http/1.1"])
    host, _, port = target.rpartition(":")
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=host) as secured,
    ):
        cipher = secured.cipher()
        return f"{secured.version()} {cipher[0] if cipher else '?'}, {secured.selected_alpn_protocol() or 'no ALPN'}"
