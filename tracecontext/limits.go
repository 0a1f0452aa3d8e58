// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// Limits on inbound trace context, enforced on header values before any
// parser sees them (see [LimitPropagator]).
const (
	// MaxTraceStateLen is the longest tracestate kept, in characters,
	// commas included: the 512 characters W3C Trace Context asks every
	// vendor to propagate.
	MaxTraceStateLen = 512
	// MaxTraceStateMembers is the most tracestate list-members kept (W3C).
	MaxTraceStateMembers = 32
	// MaxTraceStateMemberLen is the length beyond which a list-member is
	// the first to go when a tracestate must be cut, as W3C recommends.
	MaxTraceStateMemberLen = 128
	// MaxTraceStateScan is how many bytes of a tracestate header are looked
	// at when it must be cut: past them nothing is read.
	MaxTraceStateScan = 8192
	// MaxBaggageBytes is the largest baggage accepted (W3C Baggage); a
	// larger one is dropped whole, unparsed. Beyond 64 members
	// (MaxBaggageMembers) the first 64 are kept, by baggage.Parse.
	MaxBaggageBytes = 8192
	// MaxBaggageMembers is the most baggage list-members kept.
	MaxBaggageMembers = 64
	// MaxTraceparentLen is the longest traceparent looked at: version 00 is
	// 55 characters, later versions only append fields; a longer header is
	// ignored.
	MaxTraceparentLen = 512
)

// LimitTraceState returns ts cut to the limits. A tracestate within them is
// returned as it is, at the cost of counting its commas.
//
// When it must be cut, only whole list-members are kept, as W3C Trace
// Context requires: members longer than MaxTraceStateMemberLen characters
// are dropped first, then members from the end until at most
// MaxTraceStateMembers remain within MaxTraceStateLen characters. Empty
// members and the whitespace around members are dropped too, and only the
// first MaxTraceStateScan bytes are read (a member they cut is dropped), so
// the cost is bounded whatever the header's size. Members are not
// validated here: trace.ParseTraceState still rejects an invalid
// tracestate as a whole.
func LimitTraceState(ts string) string {
	if len(ts) <= MaxTraceStateLen && strings.Count(ts, ",") < MaxTraceStateMembers {
		return ts
	}
	scan, partial := ts, false
	if len(scan) > MaxTraceStateScan {
		// Read no further; the last member read is incomplete unless
		// a comma follows it.
		scan, partial = scan[:MaxTraceStateScan], ts[MaxTraceStateScan] != ','
	}
	var buf [MaxTraceStateLen]byte
	out, n := buf[:0], 0
	for scan != "" && n < MaxTraceStateMembers {
		m, rest, found := strings.Cut(scan, ",")
		if !found && partial {
			break
		}
		scan = rest
		m = strings.Trim(m, " \t")
		if m == "" || len(m) > MaxTraceStateMemberLen {
			continue
		}
		if n > 0 {
			if len(out)+1+len(m) > MaxTraceStateLen {
				break
			}
			out = append(out, ',')
		}
		out = append(out, m...)
		n++
	}
	return string(out)
}

// LimitBaggage returns b, or "" when it is over MaxBaggageBytes. The
// library's baggage.Parse drops such a baggage too; doing it here keeps the
// rule independent of the library version and applies it to the
// combination of several HTTP baggage fields.
func LimitBaggage(b string) string {
	if len(b) > MaxBaggageBytes {
		return ""
	}
	return b
}

// LimitTraceparent returns tp, or "" when it is longer than any traceparent
// could reasonably be.
func LimitTraceparent(tp string) string {
	if len(tp) > MaxTraceparentLen {
		return ""
	}
	return tp
}

// LimitPropagator returns p with W3C limits enforced on what it extracts,
// for carriers from outside such as HTTP requests or Kafka record headers
// (kafkatrace's Tracer.Extract enforces them on records by itself). Its Extract hands p a carrier whose values
// are cut before p parses them:
//
//   - tracestate is cut to whole members (see MaxTraceStateLen,
//     MaxTraceStateMembers, MaxTraceStateMemberLen, MaxTraceStateScan);
//   - baggage over MaxBaggageBytes is dropped;
//   - traceparent over MaxTraceparentLen is ignored.
//
// When the carrier holds several values per key (propagation.HeaderCarrier,
// HTTP), they are resolved as the W3C specifications say for HTTP fields:
// more than one traceparent is invalid, so the traceparent is ignored;
// tracestate and baggage fields are combined in order, separated by commas,
// and the combination is limited as one value (only its first
// MaxTraceStateScan or MaxBaggageBytes+1 bytes are ever built).
// Inject and Fields are p's.
func LimitPropagator(p propagation.TextMapPropagator) propagation.TextMapPropagator {
	return limitPropagator{p}
}

type limitPropagator struct {
	propagation.TextMapPropagator
}

func (l limitPropagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	return l.TextMapPropagator.Extract(ctx, limitCarrier(carrier))
}

// limitCarrier wraps a carrier so that its W3C values come out limited.
func limitCarrier(c propagation.TextMapCarrier) propagation.TextMapCarrier {
	if lc, ok := c.(limitedCarrier); ok {
		return lc
	}
	lc := limitedCarrier{TextMapCarrier: c}
	lc.values, _ = c.(propagation.ValuesGetter)
	return lc
}

// limitedCarrier limits the values of any other carrier. It deliberately
// does not implement propagation.ValuesGetter: the propagators then read
// the combined, limited value through Get.
type limitedCarrier struct {
	propagation.TextMapCarrier
	values propagation.ValuesGetter // nil: one value per key
}

func (c limitedCarrier) Get(key string) string {
	switch key {
	case TraceparentHeader:
		if c.values != nil {
			if vs := c.values.Values(key); len(vs) != 1 {
				return "" // none, or several: invalid
			}
		}
		return LimitTraceparent(c.TextMapCarrier.Get(key))
	case TracestateHeader:
		return LimitTraceState(c.combined(key, MaxTraceStateScan+1))
	case BaggageHeader:
		return LimitBaggage(c.combined(key, MaxBaggageBytes+1))
	}
	return c.TextMapCarrier.Get(key)
}

// combined returns the values of key joined by commas, cut after limit
// bytes.
func (c limitedCarrier) combined(key string, limit int) string {
	if c.values == nil {
		return c.TextMapCarrier.Get(key)
	}
	vs := c.values.Values(key)
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		if room := limit - b.Len(); len(v) > room {
			b.WriteString(v[:room])
			break
		}
		b.WriteString(v)
		if b.Len() >= limit {
			break
		}
	}
	return b.String()
}
