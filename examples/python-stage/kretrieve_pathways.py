"""Pathway windows: what a kretrieve stage in Python publishes so that
`kretrieve pathways`, the console and completeness see its hop.

Standard library only. A Python stage measures, at each of its
checkpoints (package pathway: in, out, expired), the edge latency (from
the previous checkpoint) and the latency from the pathway's origin into
base-2 exponential histograms at scale 4, and counts the records by the
origin time of their pathway (5 s cohorts). Pathways.window() turns what
was measured since the last published window into one record of the
compacted topic kretrieve.pathways, in the JSON format package
pathwaytopic reads (version 1; docs/telemetry.md, "Pathway windows from
other languages"), keyed by the process's instance id.

bucket_index is package pathway's BucketIndex, bit for bit: the Go test
TestPythonBucketIndex runs `python3 kretrieve_pathways.py bucket-index`
on values around every bucket boundary and compares, and compares the
boundary table (`boundary-mantissas`) with Go's.
"""

import datetime
import json
import os
import re
import socket
import struct
import sys

# The window format's version (pathwaytopic.Version).
VERSION = 1

# Histograms (package pathway): scale 4, 16 buckets per power of two,
# bucket i holding (2^(i/16), 2^((i+1)/16)] seconds, clamped to the
# buckets from about 0.48 us to about 68 minutes.
SCALE = 4
PER_OCTAVE = 1 << SCALE
MIN_INDEX, MAX_INDEX = -21 * PER_OCTAVE, 12 * PER_OCTAVE - 1

# The mantissas of 2^(j/16), j = 1..15, as Go's math.Exp2 computes them
# (Python's 2 ** x differs in the last bit for j = 8, 10 and 12), and one
# above every mantissa for j = 16.
_BOUNDARY_MANTISSA = (
    0x0B5586CF9890F, 0x172B83C7D517B, 0x2387A6E756238, 0x306FE0A31B715, 0x3DEA64C123422,
    0x4BFDAD5362A27, 0x5AB07DD485429, 0x6A09E667F3BCC, 0x7A11473EB0187, 0x8ACE5422AA0DC,
    0x9C49182A3F090, 0xAE89F995AD3AE, 0xC199BDD85529C, 0xD5818DCFBA487, 0xEA4AFA2A490DA,
    1 << 52,
)

# Cohorts (package pathway): 5 s bins of origin times, the last 10
# minutes of them published.
COHORT_WIDTH_S = 5
COHORT_HORIZON_S = 600

# Bounds of a window (package pathwaytopic).
MAX_SERIES = 256  # series of one process, as kafkatrace.DefaultMaxPathways
MAX_EXEMPLARS = 8  # per histogram
MAX_WINDOW_EXEMPLARS = 512
MIN_INTERVAL_NS, MAX_INTERVAL_NS = 10 * 10**6, 3600 * 10**9
DEFAULT_INTERVAL_NS = 10 * 10**9
DEFAULT_TOPIC = "kretrieve.pathways"

DIRECTIONS = {1: "in", 2: "out", 3: "expired"}


def seconds(ns: int) -> float:
    """Go's time.Duration.Seconds: whole seconds plus the nanoseconds' fraction."""
    sec, nsec = divmod(ns, 10**9)
    return float(sec) + float(nsec) / 1e9


def bucket_index(ns: int) -> int:
    """pathway.BucketIndex of a positive duration in nanoseconds: the i with
    2^(i/16) < ns/1e9 <= 2^((i+1)/16), clamped to [MIN_INDEX, MAX_INDEX]."""
    (bits,) = struct.unpack("<Q", struct.pack("<d", seconds(ns)))
    e = (bits >> 52 & 0x7FF) - 1023
    m = bits & ((1 << 52) - 1)
    if m == 0:  # an exact power of two: the upper bound of the bucket below
        i = e * PER_OCTAVE - 1
    else:
        lo, hi = 0, PER_OCTAVE - 1  # the smallest j with m <= _BOUNDARY_MANTISSA[j]
        while lo < hi:
            mid = (lo + hi) // 2
            if m <= _BOUNDARY_MANTISSA[mid]:
                hi = mid
            else:
                lo = mid + 1
        i = e * PER_OCTAVE + lo
    return min(max(i, MIN_INDEX), MAX_INDEX)


def parse_duration(s: str) -> int:
    """Nanoseconds of a Go duration ("10s", "1m30s", "250ms", "0"), as the Go flags take them."""
    units = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
    if s == "0":
        return 0
    parts = re.findall(r"([0-9]+(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)", s)
    if not s or "".join(n + u for n, u in parts) != s:
        raise ValueError("invalid duration %r (want e.g. 10s, 500ms, 1m)" % s)
    return int(sum(float(n) * units[u] for n, u in parts))


class Histogram:
    """One window's measurements: bucket counts by index, zeros, sum."""

    __slots__ = ("counts", "zeros", "sum")

    def __init__(self):
        self.counts, self.zeros, self.sum = {}, 0, 0

    def record(self, ns: int):
        """Adds a measurement; a negative one counts as 0, as in Go."""
        if ns <= 0:
            self.zeros += 1
            return
        i = bucket_index(ns)
        self.counts[i] = self.counts.get(i, 0) + 1
        self.sum += ns

    def wire(self, exemplars):
        """The histogram as pathwaytopic's JSON: count, sum_ns, zero_count, offset, buckets."""
        h = {"count": self.zeros + sum(self.counts.values()), "sum_ns": self.sum, "offset": 0}
        if self.zeros:
            h["zero_count"] = self.zeros
        if self.counts:
            lo, hi = min(self.counts), max(self.counts)
            h["offset"], h["buckets"] = lo, [self.counts.get(i, 0) for i in range(lo, hi + 1)]
        if exemplars:
            h["exemplars"] = exemplars
        return h


class Series:
    """One pathway (hash, parent) at one checkpoint: this window's histograms, the
    newest exemplar per power of two, and the cumulative count and cohorts."""

    def __init__(self, service, group, topic, direction, hash_, parent):
        self.cp = (service, group, topic, direction)
        self.hash, self.parent = hash_, parent
        self.total = 0
        self.edge, self.origin = Histogram(), Histogram()
        self.exemplars = ({}, {})  # edge, origin: octave -> exemplar
        self.cohorts = {}  # origin bin start (Unix s) -> count

    def record(self, edge_ns, origin_ns, exemplar=None, now_ns=0):
        """Measures one record; exemplar is (trace id, span id) of a sampled one."""
        self.total += 1
        for h, ex, ns in ((self.edge, self.exemplars[0], edge_ns), (self.origin, self.exemplars[1], origin_ns)):
            h.record(ns)
            if exemplar:
                octave = 0 if ns <= 0 else (bucket_index(ns) - MIN_INDEX) // PER_OCTAVE
                ex[octave] = {"trace_id": exemplar[0], "span_id": exemplar[1], "value_ns": max(ns, 0), "time_ns": now_ns}

    def count(self, origin_ns):
        """Counts one record by its pathway's origin (at in and expired checkpoints, and at
        out ones once the broker acknowledged the record)."""
        b = origin_ns // 10**9 // COHORT_WIDTH_S * COHORT_WIDTH_S
        self.cohorts[b] = self.cohorts.get(b, 0) + 1

    def wire(self, now_ns, budget):
        """The series as pathwaytopic's JSON, with at most budget[0] exemplars."""
        service, group, topic, direction = self.cp
        s = {"service": service, "topic": topic, "direction": DIRECTIONS[direction],
             "hash": "%016x" % self.hash, "parent": "%016x" % self.parent, "total": self.total}
        if group:
            s["group"] = group
        for name, h, ex in (("edge", self.edge, self.exemplars[0]), ("origin", self.origin, self.exemplars[1])):
            newest = sorted(ex.values(), key=lambda e: e["time_ns"])[-min(MAX_EXEMPLARS, budget[0]):] if budget[0] else []
            budget[0] -= len(newest)
            s[name] = h.wire(newest)
        since = now_ns // 10**9 // COHORT_WIDTH_S * COHORT_WIDTH_S - COHORT_HORIZON_S
        for b in [b for b in self.cohorts if b < since]:
            del self.cohorts[b]  # out of the horizon: no reader judges it any more
        if self.cohorts:
            lo, hi = min(self.cohorts), max(self.cohorts)
            s["cohorts"] = {"start": lo, "counts": [self.cohorts.get(b, 0) for b in range(lo, hi + 1, COHORT_WIDTH_S)]}
        return s


def instance_id(service: str) -> str:
    """pathwaytopic.NewInstanceID: service@host/pid-random, the records' key."""
    return "%s@%s/%d-%s" % (service[:120], socket.gethostname()[:100], os.getpid(), os.urandom(3).hex())


def _rfc3339(ns: int) -> str:
    t = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (".%09d" % (ns % 10**9)).rstrip("0").rstrip(".") + "Z"


class Pathways:
    """The pathway series of one process and the windows it publishes."""

    def __init__(self, service, interval_ns, start_ns, instance=None):
        if not MIN_INTERVAL_NS <= interval_ns <= MAX_INTERVAL_NS:
            raise ValueError("pathways interval %d ns not within 10ms and 1h" % interval_ns)
        self.service, self.interval = service, interval_ns
        self.instance = instance or instance_id(service)
        self.start = start_ns
        self.series = {}

    def series_of(self, service, group, topic, direction, hash_, parent) -> Series:
        """The series of a pathway at a checkpoint; beyond MAX_SERIES, the checkpoint's
        overflow series (hash and parent 0), as kafkatrace does."""
        key = (service, group, topic, direction, hash_, parent)
        s = self.series.get(key)
        if s is None and hash_ and len(self.series) >= MAX_SERIES:
            key = (service, group, topic, direction, 0, 0)
            s = self.series.get(key)
        if s is None:
            s = self.series[key] = Series(*key)
        return s

    def window(self, now_ns, final=False):
        """The record value of the window from the last published one to now_ns, and
        the window's end (Unix ns) for published()."""
        end = max(now_ns, self.start + 1)
        budget = [MAX_WINDOW_EXEMPLARS]
        busiest = sorted(self.series.values(), key=lambda s: -(s.edge.zeros + sum(s.edge.counts.values())))
        w = {"v": VERSION, "service": self.service, "instance": self.instance,
             "start": _rfc3339(self.start), "end": _rfc3339(end), "interval_ns": self.interval,
             "series": [s.wire(end, budget) for s in busiest]}
        if final:
            w["final"] = True
        return json.dumps(w, separators=(",", ":")).encode(), end

    def published(self, end_ns):
        """Starts the next window at end_ns: call it once the broker acknowledged a window."""
        self.start = max(end_ns, self.start + 1)
        for s in self.series.values():
            s.edge, s.origin = Histogram(), Histogram()


def _self_test(what):
    """bucket-index: one nanosecond value a line on stdin, its bucket index a line on
    stdout; boundary-mantissas: the table bucket_index searches, in hexadecimal."""
    if what == "boundary-mantissas":
        print(" ".join("%x" % m for m in _BOUNDARY_MANTISSA))
        return
    for line in sys.stdin:
        if line.strip():
            print(bucket_index(int(line)))


if __name__ == "__main__":
    if sys.argv[1:] not in (["bucket-index"], ["boundary-mantissas"]):
        sys.exit("usage: kretrieve_pathways.py bucket-index < nanoseconds | boundary-mantissas")
    _self_test(sys.argv[1])
