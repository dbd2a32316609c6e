"""AIP-158 pages for the sandbox's list methods: opaque tokens the server hands out and checks."""

import base64

import grpc

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def page(call, items, page_size, page_token):
    """One page of `items` and the token of the next (empty on the last page). A negative size or
    a token this server did not hand out ends the call INVALID_ARGUMENT."""
    if page_size < 0:
        call.fail(grpc.StatusCode.INVALID_ARGUMENT, "page_size must not be negative")
    size = min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
    start = 0
    if page_token:
        try:
            text = base64.urlsafe_b64decode(page_token.encode("ascii")).decode("ascii")
            if not text.startswith("offset:"):
                raise ValueError
            start = int(text[len("offset:"):])
            if not 0 <= start <= len(items):
                raise ValueError
        except (ValueError, UnicodeError):
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, "page_token is not one this server handed out")
    end = start + size
    next_token = base64.urlsafe_b64encode(f"offset:{end}".encode()).decode() if end < len(items) else ""
    return items[start:end], next_token
