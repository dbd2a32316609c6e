"""A throwaway certificate authority and a server certificate for the sandbox's TLS port."""

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _write(path, data, mode):
    # Create with the final mode so a key is never readable by others, even briefly.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def generate(state_dir, names=("localhost",), addresses=("127.0.0.1", "::1")):
    """Writes ca.pem, server.pem and server.key into state_dir; returns their paths."""
    now = datetime.datetime.now(datetime.timezone.utc)
    validity = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=7))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "swift-authrpc sandbox CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False),
            critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    server_key = ec.generate_private_key(ec.SECP256R1())
    alternative_names = [x509.DNSName(name) for name in names]
    alternative_names += [x509.IPAddress(ipaddress.ip_address(address)) for address in addresses]
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    paths = {
        "ca_cert": os.path.join(state_dir, "ca.pem"),
        "server_cert": os.path.join(state_dir, "server.pem"),
        "server_key": os.path.join(state_dir, "server.key"),
    }
    _write(paths["ca_cert"], ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(paths["server_cert"], server_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(
        paths["server_key"],
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()),
        0o600)
    return paths
