"""gRPC-framed grpc.testing messages, for h2load (which sends a file's bytes as the body)."""


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def request_frame(request_bytes, response_bytes):
    """SimpleRequest{response_size: response_bytes, payload: {body: request_bytes zero bytes}}, framed."""
    message = b""
    if response_bytes:
        message += b"\x10" + varint(response_bytes)                  # response_size = 2
    if request_bytes:
        body = b"\x12" + varint(request_bytes) + bytes(request_bytes)  # Payload.body = 2
        message += b"\x1a" + varint(len(body)) + body                  # payload = 3
    return b"\x00" + len(message).to_bytes(4, "big") + message


def min_response_frame_size(response_bytes):
    """The fewest bytes a correct SimpleResponse frame with `response_bytes` payload bytes takes
    (servers may add an empty payload field when response_bytes is 0)."""
    if not response_bytes:
        return 5
    body = b"\x12" + varint(response_bytes) + bytes(0)
    return 5 + 1 + len(varint(len(body) + response_bytes)) + len(body) + response_bytes
