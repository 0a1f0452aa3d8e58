// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"slices"

	"go.opentelemetry.io/otel/trace"
)

// W3C Trace Context and Baggage header names.
const (
	TraceparentHeader = "traceparent"
	TracestateHeader  = "tracestate"
	BaggageHeader     = "baggage"
)

// TraceparentLen is the length of a version 00 traceparent:
// "00-" + 32 hex + "-" + 16 hex + "-" + 2 hex.
const TraceparentLen = 55

// W3CFields reports whether a propagator with these fields is the W3C one
// (TraceContext, optionally with Baggage). The header names belong to the
// W3C specifications, so whatever writes them writes their format.
func W3CFields(fields []string) (w3c, withBaggage bool) {
	f := slices.Clone(fields)
	slices.Sort(f)
	switch {
	case slices.Equal(f, []string{BaggageHeader, TraceparentHeader, TracestateHeader}):
		return true, true
	case slices.Equal(f, []string{TraceparentHeader, TracestateHeader}):
		return true, false
	}
	return false, false
}

const hexDigits = "0123456789abcdef"

// AppendTraceparent appends sc's version 00 traceparent to b, keeping only
// the flags the specification defines (sampled and random), as
// propagation.TraceContext does. It grows b at most once, by the whole
// TraceparentLen (appending to nil allocates once, not once per doubling).
func AppendTraceparent(b []byte, sc trace.SpanContext) []byte {
	tid, sid := sc.TraceID(), sc.SpanID()
	flags := byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))
	b = slices.Grow(b, TraceparentLen)
	b = append(b, '0', '0', '-')
	for _, c := range tid {
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	b = append(b, '-')
	for _, c := range sid {
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(b, '-', hexDigits[flags>>4], hexDigits[flags&0xf])
}

// ParseTraceparent parses a version 00 traceparent. It returns false for
// anything else — absent, another version, any deviation from the format,
// reserved flag bits, all-zero ids — which the caller hands to the library's
// propagator, so this fast path never accepts what the library would not.
// The returned span context is remote; its flags keep sampled and random.
func ParseTraceparent(h string) (trace.SpanContext, bool) {
	if len(h) != TraceparentLen || h[0] != '0' || h[1] != '0' || h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return trace.SpanContext{}, false
	}
	var cfg trace.SpanContextConfig
	ok := decodeHex(cfg.TraceID[:], h[3:35]) && decodeHex(cfg.SpanID[:], h[36:52])
	var flags [1]byte
	if !ok || !decodeHex(flags[:], h[53:55]) || flags[0] > 3 {
		return trace.SpanContext{}, false
	}
	cfg.TraceFlags = trace.TraceFlags(flags[0])
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	return sc, sc.IsValid()
}

// decodeHex decodes lowercase hex src into dst (len(src) == 2*len(dst)).
// Uppercase is invalid in W3C Trace Context.
func decodeHex(dst []byte, src string) bool {
	var bad byte
	for i := range dst {
		hi, lo := unhex[src[2*i]], unhex[src[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo
	}
	return bad&0xf0 == 0
}

// unhex maps lowercase hex digits to their value and every other byte to
// 0xff, so one OR over a decoded string detects any invalid character.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range 10 {
		t['0'+i] = byte(i)
	}
	for i := range 6 {
		t['a'+i] = byte(10 + i)
	}
	return t
}()
