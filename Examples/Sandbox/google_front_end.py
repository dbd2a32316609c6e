"""What Google's front ends check before a call reaches a Google API: the routing header.

Google answers many calls without `x-goog-request-params` with INVALID_ARGUMENT "An
x-goog-request-params request metadata property must be provided" (Storage Control, KMS, Artifact
Registry...). The sandbox's Google services do the same: every method whose proto annotations
route it (AIP-4222) checks the header against the request before the servicer runs.

The expected header is computed here from the method's own annotations, independently of the
Swift generator, the way Google's Python generator does it:

- `google.api.routing`: each routing parameter's path template becomes a regular expression
  (`*` is `[^/]+`, `**` is `.*`, a trailing `/**` may match nothing); the named group of the
  last parameter that matches with a non-empty value gives its key's value.
- otherwise `google.api.http`: every variable of the main and additional bindings' paths, whole
  field values under their field paths.

Keys and values are percent-encoded (everything but RFC 3986's unreserved characters). A call
passes when the header carries every expected key with the expected value (after decoding);
it fails when the header is missing or a value differs.
"""

import logging
import re
import urllib.parse

import grpc

REQUEST_PARAMS_KEY = "x-goog-request-params"
API_CLIENT_KEY = "x-goog-api-client"
MISSING_MESSAGE = "An x-goog-request-params request metadata property must be provided"
# Echoes of what a call carried, in the response's initial metadata, for the tests.
REQUEST_PARAMS_ECHO_KEY = "x-sandbox-request-params"
API_CLIENT_ECHO_KEY = "x-sandbox-api-client"

_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:=[^}]*)?\}")
_MAX_HEADER_BYTES = 8192

log = logging.getLogger("sandbox.front_end")


def _segment_regex(segment):
    if segment == "**":
        return ".*"
    if segment == "*":
        return "[^/]+"
    return re.escape(segment)


def _segments_regex(segments):
    """The segments joined with "/", a `**` at either end also matching nothing."""
    parts = [_segment_regex(segment) for segment in segments]
    if len(parts) > 1 and segments[-1] == "**":
        return "/".join(parts[:-1]) + "(?:/.*)?"
    if len(parts) > 1 and segments[0] == "**":
        return "(?:.*/)?" + "/".join(parts[1:])
    return "/".join(parts)


def template_regex(template):
    """(key, compiled regular expression) of a routing path template with one `{key=...}`."""
    match = re.fullmatch(r"(?P<before>.*?)\{(?P<key>[A-Za-z_][A-Za-z0-9_.]*)(?:=(?P<inner>[^}]*))?\}(?P<after>.*)",
                         template)
    if match is None:
        raise ValueError(f"routing template {template!r} has no variable")
    before = [segment for segment in match["before"].split("/") if segment]
    inner = (match["inner"] or "*").split("/")
    after = [segment for segment in match["after"].split("/") if segment]
    pattern = ""
    if before:
        pattern += _segments_regex(before) + "/"
    pattern += f"(?P<value>{_segments_regex(inner)})"
    if after:
        pattern += "(?:/.*)?" if after == ["**"] else "/" + _segments_regex(after)
    return match["key"], re.compile(pattern)


def field_text(request, path):
    """The text a routing header sends for the field at `path`: strings as they are, integers in
    decimal (zero, proto3's unset, as nothing)."""
    value = request
    for name in path.split("."):
        value = getattr(value, name)
    if isinstance(value, bool):
        raise TypeError(f"{path} is a bool field")
    if isinstance(value, int):
        return "" if value == 0 else str(value)
    return value


class MethodRouting:
    """The routing of one method, read from its descriptor's options."""

    def __init__(self, method_descriptor, annotations):
        options = method_descriptor.GetOptions()
        self.parameters = []  # (field, key, regex or None), in the annotation's order
        if options.HasExtension(annotations.routing):
            for parameter in options.Extensions[annotations.routing].routing_parameters:
                if parameter.path_template:
                    key, regex = template_regex(parameter.path_template)
                else:
                    key, regex = parameter.field, None
                self.parameters.append((parameter.field, key, regex))
        elif options.HasExtension(annotations.http):
            rule = options.Extensions[annotations.http]
            seen = []
            for binding in [rule, *rule.additional_bindings]:
                kind = binding.WhichOneof("pattern")
                if kind is None:
                    continue
                path = binding.custom.path if kind == "custom" else getattr(binding, kind)
                for field in _VARIABLE.findall(path):
                    if field not in seen:
                        seen.append(field)
                        self.parameters.append((field, field, None))

    def expected(self, request):
        """[(key, value)] the request should be routed with, keys in the order they first appear."""
        order, values = [], {}
        for field, key, regex in self.parameters:
            if key not in order:
                order.append(key)
            text = field_text(request, field)
            if not text:
                continue
            if regex is None:
                values[key] = text
                continue
            match = regex.fullmatch(text)
            if match is not None and match["value"]:
                values[key] = match["value"]
        return [(key, values[key]) for key in order if key in values]


def encode(pairs):
    """`key=value&...`, both percent-encoded as AIP-4222 asks."""
    return "&".join(f"{urllib.parse.quote(key, safe='')}={urllib.parse.quote(value, safe='')}" for key, value in pairs)


def parse(headers):
    """{key: value} of every x-goog-request-params value received, decoded; later values win."""
    received = {}
    for header in headers:
        for pair in header.split("&"):
            if not pair:
                continue
            key, _, value = pair.partition("=")
            received[urllib.parse.unquote(key)] = urllib.parse.unquote(value)
    return received


def check(routing, request, metadata):
    """None when the call's header routes `request` as its annotations say, else the error text."""
    expected = routing.expected(request)
    if not expected:
        return None
    headers = [value for key, value in metadata if key == REQUEST_PARAMS_KEY]
    if not headers:
        return MISSING_MESSAGE
    if sum(len(header) for header in headers) > _MAX_HEADER_BYTES:
        return f"{MISSING_MESSAGE} (the one sent is longer than {_MAX_HEADER_BYTES} bytes)"
    received = parse(headers)
    for key, value in expected:
        if key not in received:
            return f"{MISSING_MESSAGE} (it has no {key!r} for this request)"
        if received[key] != value:
            return f"{MISSING_MESSAGE} (its {key!r} is {received[key]!r}, the request's is {value!r})"
    return None


class FrontEnd:
    """Checks routing before the servicers of Google services run; wraps each servicer."""

    def __init__(self, annotations):
        """`annotations` has the `http` and `routing` extension fields (generated modules)."""
        self.annotations = annotations

    def wrap(self, servicer, service_descriptor):
        """A servicer whose every method first checks the call's routing header, then answers
        as `servicer` does, with what the call carried echoed in its initial metadata."""
        front_end = self
        methods = {}
        for method in service_descriptor.methods:
            routing = MethodRouting(method, self.annotations)
            methods[method.name] = (routing, getattr(servicer, method.name))

        class Routed:
            pass

        routed = Routed()
        for name, (routing, implementation) in methods.items():
            setattr(routed, name, front_end._method(routing, implementation))
        routed.port_label = getattr(servicer, "port_label", "-")
        return routed

    @staticmethod
    def _method(routing, implementation):
        name = getattr(implementation, "__name__", "?")

        def method(request, context):
            metadata = tuple(context.invocation_metadata() or ())
            echo = [(REQUEST_PARAMS_ECHO_KEY, "&".join(v for k, v in metadata if k == REQUEST_PARAMS_KEY)[:1024]),
                    (API_CLIENT_ECHO_KEY, next((v for k, v in metadata if k == API_CLIENT_KEY), "")[:256])]
            context.send_initial_metadata(echo)
            problem = check(routing, request, metadata)
            if problem is not None:
                log.info("%s refused by the front end: %s", name, problem)
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, problem)
            return implementation(request, context)

        return method
