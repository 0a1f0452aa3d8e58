"""What a kretrieve stage written in Python needs besides kafka-python.

Standard library only, so that Debian's python3-kafka is the one
dependency:

- xxh64: the xxHash64 hash (seed 0) that kretrieve's pathway hashes and
  key hashes use (Go: github.com/cespare/xxhash/v2).
- Pathway: the 25-byte `kretrieve-pathway` header (package pathway):
  version 1 | hash | origin ns | previous checkpoint ns, big-endian; a
  checkpoint's identity is xxh64(service 0 group 0 topic 0 direction) and
  a pathway's hash is xxh64(parent hash || identity), 8 bytes each.
- W3C Trace Context: traceparent parsing, span ids, and a minimal span
  exporter in OTLP/HTTP JSON (when OTEL_EXPORTER_OTLP_ENDPOINT or
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set).
- The deadline header `kretrieve-deadline` (decimal Unix milliseconds).
"""

import json
import os
import re
import struct
import sys
import time
import urllib.request

MASK = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def _round(acc, lane):
    acc = (acc + lane * P2) & MASK
    return (_rotl(acc, 31) * P1) & MASK


def _merge(acc, v):
    acc ^= _round(0, v)
    return (acc * P1 + P4) & MASK


def xxh64(data: bytes) -> int:
    """xxHash64 of data with seed 0."""
    n, i = len(data), 0
    if n >= 32:
        v = [(P1 + P2) & MASK, P2, 0, (-P1) & MASK]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(a, b) for a, b in zip(v, lanes)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & MASK
        for x in v:
            h = _merge(h, x)
    else:
        h = P5
    h = (h + n) & MASK
    while i + 8 <= n:
        (k,) = struct.unpack_from("<Q", data, i)
        h ^= _round(0, k)
        h = (_rotl(h, 27) * P1 + P4) & MASK
        i += 8
    if i + 4 <= n:
        (k,) = struct.unpack_from("<I", data, i)
        h ^= (k * P1) & MASK
        h = (_rotl(h, 23) * P2 + P3) & MASK
        i += 4
    while i < n:
        h ^= (data[i] * P5) & MASK
        h = (_rotl(h, 11) * P1) & MASK
        i += 1
    h ^= h >> 33
    h = (h * P2) & MASK
    h ^= h >> 29
    h = (h * P3) & MASK
    return h ^ (h >> 32)


# Pathways (Go: package pathway).
PATHWAY_HEADER = "kretrieve-pathway"
PATHWAY_IN, PATHWAY_OUT, PATHWAY_EXPIRED = 1, 2, 3  # pathway.Direction
_MAX_AGE_NS = 30 * 24 * 3600 * 10**9
_MAX_SKEW_NS = 60 * 10**9


def checkpoint_id(service: str, group: str, topic: str, direction: int) -> int:
    """pathway.Checkpoint.ID: xxh64 of service, group, topic (each followed by 0) and direction."""
    b = b"".join(s.encode() + b"\0" for s in (service, group, topic))
    return xxh64(b + bytes([direction]))


def chain(parent: int, cp_id: int) -> int:
    """pathway.Chain: the hash of a checkpoint after the pathway whose hash is parent; never 0."""
    return xxh64(struct.pack(">QQ", parent, cp_id)) or 1


class Pathway:
    """A record's pathway context: hash, origin and previous checkpoint time (Unix ns)."""

    def __init__(self, hash_, origin, prev):
        self.hash, self.origin, self.prev = hash_, origin, prev

    @staticmethod
    def decode(value, now_ns):
        """pathway.Decode: None unless exactly one well-formed header with plausible times."""
        if value is None or len(value) != 25 or value[0] != 1:
            return None
        h, origin, prev = struct.unpack(">QQQ", value[1:])
        if h == 0 or origin <= 0 or origin >= 1 << 63 or origin < now_ns - _MAX_AGE_NS:
            return None
        if prev < origin or prev > now_ns + _MAX_SKEW_NS:
            return None
        return Pathway(h, origin, prev)

    def encode(self) -> bytes:
        return bytes([1]) + struct.pack(">QQQ", self.hash, self.origin, self.prev)

    @staticmethod
    def next(parent, cp_id, now_ns):
        """pathway.Next: the context a checkpoint writes; a missing parent starts a pathway."""
        if parent is None:
            return Pathway(chain(0, cp_id), now_ns, now_ns)
        return Pathway(chain(parent.hash, cp_id), parent.origin, now_ns)


# W3C Trace Context.
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


def parse_traceparent(value):
    """(trace id, parent span id, flags) of a traceparent value, or None when invalid."""
    m = _TRACEPARENT.match(value or "")
    if not m or m.group(1) == "ff" or (m.group(1) == "00" and m.group(5)):
        return None
    if set(m.group(2)) == {"0"} or set(m.group(3)) == {"0"}:
        return None
    return m.group(2), m.group(3), int(m.group(4), 16)


def new_id(nbytes: int) -> str:
    """A random non-zero trace (16 bytes) or span (8 bytes) id in hex."""
    while True:
        b = os.urandom(nbytes)
        if any(b):
            return b.hex()


def traceparent(trace_id, span_id, flags) -> str:
    return "00-%s-%s-%02x" % (trace_id, span_id, flags)


# The deadline header (Go: messages.HeaderDeadline).
DEADLINE_HEADER = "kretrieve-deadline"


def expired(value, now_ms) -> bool:
    """Whether a kretrieve-deadline value (1 to 16 digits) names a time before now_ms.
    Anything else is ignored: the record has no deadline, as in Go."""
    if value is None or not re.fullmatch(rb"[0-9]{1,16}", value):
        return False
    return int(value) < now_ms


class Span:
    """One span, exported as OTLP/JSON."""

    def __init__(self, name, kind, trace_id, parent_id, start_ns=None, links=()):
        self.name, self.kind, self.trace_id, self.parent_id = name, kind, trace_id, parent_id
        self.span_id = new_id(8)
        self.start = start_ns or time.time_ns()
        self.end = None
        self.attrs = {}
        self.links = list(links)

    def finish(self):
        self.end = time.time_ns()

    def otlp(self):
        def value(v):
            if isinstance(v, bool):
                return {"boolValue": v}
            if isinstance(v, int):
                return {"intValue": str(v)}
            if isinstance(v, float):
                return {"doubleValue": v}
            return {"stringValue": str(v)}

        d = {"traceId": self.trace_id, "spanId": self.span_id, "name": self.name, "kind": self.kind,
             "startTimeUnixNano": str(self.start), "endTimeUnixNano": str(self.end or time.time_ns()),
             "attributes": [{"key": k, "value": value(v)} for k, v in self.attrs.items()],
             "links": [{"traceId": t, "spanId": s} for t, s in self.links]}
        if self.parent_id:
            d["parentSpanId"] = self.parent_id
        return d


KIND_INTERNAL, KIND_PRODUCER, KIND_CONSUMER = 1, 4, 5


class Exporter:
    """Sends spans to an OTLP/HTTP endpoint as JSON, or drops them when none is configured
    (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces;
    OTEL_TRACES_EXPORTER=none turns it off). A failed export is reported on stderr, never fatal."""

    def __init__(self, service):
        self.service = service
        url = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
        if not url and os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            url = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
        if os.environ.get("OTEL_TRACES_EXPORTER", "otlp") == "none":
            url = ""
        self.url = url

    def export(self, spans):
        if not self.url or not spans:
            return
        body = {"resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": self.service}}]},
            "scopeSpans": [{"scope": {"name": "kretrieve/examples/python-stage"}, "spans": [s.otlp() for s in spans]}],
        }]}
        req = urllib.request.Request(self.url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=2) as resp:
                resp.read()
        except OSError as e:
            print("span export to %s failed: %s" % (self.url, e), file=sys.stderr, flush=True)
