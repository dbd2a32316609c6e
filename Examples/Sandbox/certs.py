"""A throwaway certificate authority and a server certificate for the sandbox's TLS port.

Every sandbox start makes a fresh CA, so nothing trusts it but the tests that read ca.pem.
The CA's private key never touches the disk; only the server key is written (mode 0600).
"""

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_COMMON_NAME = "swift-authrpc sandbox CA"
SERVER_NAME = "localhost"
# Another DNS name the certificate is valid for, as a virtual host: calls that send it as their
# :authority are checked against this certificate and must pass (audience binding).
SERVER_ALIASES = ("alias.sandbox.test",)
SERVER_ADDRESSES = ("127.0.0.1", "::1")


def _key_usage(**enabled):
    flags = dict.fromkeys(
        ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
         "key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only"),
        False)
    flags.update(enabled)
    return x509.KeyUsage(**flags)


def _write(path, data, mode):
    """Writes `data` to `path` with exactly `mode`, never readable by others even for a moment."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(descriptor, "wb") as handle:
        os.fchmod(handle.fileno(), mode)  # O_CREAT's mode does not apply to an existing file
        handle.write(data)


def generate(
    state_dir, server_name=SERVER_NAME, addresses=SERVER_ADDRESSES, aliases=SERVER_ALIASES, extra_names=()
):
    """Creates a CA and a server certificate it signed; writes ca.pem, server.pem, server.key.

    The certificate names `server_name`, `aliases`, the `addresses` and `extra_names` (more DNS names, for a
    test that reaches the sandbox by a production name through a hosts file of its own).

    Returns a dict with the absolute paths: ca_cert, server_cert, server_key.
    """
    now = datetime.datetime.now(datetime.timezone.utc)
    not_before = now - datetime.timedelta(hours=1)
    not_after = now + datetime.timedelta(days=7)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    ca_certificate = (
        x509.CertificateBuilder()
        .subject_name(ca_subject)
        .issuer_name(ca_subject)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(key_cert_sign=True, crl_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    server_key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName(name) for name in (server_name, *aliases, *extra_names)]
    names += [x509.IPAddress(ipaddress.ip_address(address)) for address in addresses]
    server_certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, server_name)]))
        .issuer_name(ca_subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(server_key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    state_dir = os.path.abspath(state_dir)
    paths = {
        "ca_cert": os.path.join(state_dir, "ca.pem"),
        "server_cert": os.path.join(state_dir, "server.pem"),
        "server_key": os.path.join(state_dir, "server.key"),
    }
    _write(paths["ca_cert"], ca_certificate.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(paths["server_cert"], server_certificate.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(
        paths["server_key"],
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
        0o600)
    return paths
