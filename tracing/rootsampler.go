// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// RootSampler is one of the SDK's samplers that decide a root span from its
// trace id alone, with the ID generator the tracer provider draws its ids
// from, so that a root span's sampling decision can be taken without
// starting it (see kafkatrace.RootSampler, which it implements). Build the
// tracer provider with [RootSampler.TracerProviderOptions]. [Setup] does
// so when OTEL_TRACES_SAMPLER names one of them ([Providers.RootSampler]).
type RootSampler struct {
	sampler sdktrace.Sampler
}

var _ kafkatrace.RootSampler = (*RootSampler)(nil)

// The OTEL_TRACES_SAMPLER values of the samplers a RootSampler holds: those
// that may drop a root span. always_on and parentbased_always_on sample
// every root, so a RootSampler would save nothing.
const (
	samplerAlwaysOff               = "always_off"
	samplerTraceIDRatio            = "traceidratio"
	samplerParentBasedAlwaysOff    = "parentbased_always_off"
	samplerParentBasedTraceIDRatio = "parentbased_traceidratio"
)

// errNotDeterministic: the sampler is not one a RootSampler holds.
var errNotDeterministic = errors.New("not a sampler that decides a root from its trace id alone (always_off, traceidratio, parentbased_always_off, parentbased_traceidratio)")

// NewRootSampler returns the RootSampler of the sampler that
// OTEL_TRACES_SAMPLER=name and OTEL_TRACES_SAMPLER_ARG=arg select, built as
// the SDK builds it from them (names are case-insensitive, blanks around
// either are ignored, the ratio of traceidratio and
// parentbased_traceidratio defaults to 1). It returns an error for any
// other sampler and for a ratio that does not parse or lies outside [0, 1]
// (where the SDK would report the error and fall back to a ratio of 1).
func NewRootSampler(name, arg string) (*RootSampler, error) {
	name, arg = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(arg)
	ratio := 1.0
	if arg != "" && (name == samplerTraceIDRatio || name == samplerParentBasedTraceIDRatio) {
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("%s=%q: want a ratio from 0 to 1", envTracesSamplerArg, arg)
		}
		ratio = v
	}
	var s sdktrace.Sampler
	switch name {
	case samplerAlwaysOff:
		s = sdktrace.NeverSample()
	case samplerTraceIDRatio:
		s = sdktrace.TraceIDRatioBased(ratio)
	case samplerParentBasedAlwaysOff:
		s = sdktrace.ParentBased(sdktrace.NeverSample())
	case samplerParentBasedTraceIDRatio:
		s = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	default:
		return nil, fmt.Errorf("%s=%q: %w", envTracesSampler, name, errNotDeterministic)
	}
	return &RootSampler{sampler: s}, nil
}

// rootSamplerFromEnv returns the RootSampler of OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG, or nil when they select another sampler or
// are invalid: the SDK then builds the sampler (and reports the error).
func rootSamplerFromEnv(getenv func(string) string) *RootSampler {
	s, err := NewRootSampler(getenv(envTracesSampler), getenv(envTracesSamplerArg))
	if err != nil {
		return nil
	}
	return s
}

// Sampler returns the sampler.
func (s *RootSampler) Sampler() sdktrace.Sampler { return s.sampler }

// TracerProviderOptions returns the options that make a tracer provider
// use the sampler and the ID generator of s.
func (s *RootSampler) TracerProviderOptions() []sdktrace.TracerProviderOption {
	return []sdktrace.TracerProviderOption{sdktrace.WithSampler(s.sampler), sdktrace.WithIDGenerator(idGenerator{})}
}

// SampleRoot implements kafkatrace.RootSampler: it draws the ids as the
// tracer provider would and asks the sampler with the parameters the
// provider would pass (the parent context, the trace id, name and kind, no
// attributes and no links). A span the sampler drops gets the span context
// the provider would give its non-recording span: the new ids, the
// parent's flags without sampled, the trace state the sampler returned.
// Any other decision returns a context under which the provider's ID
// generator returns the same ids once, so that the provider's own
// decision, on the same trace id, is the same. A ctx that does carry a
// trace id is left to the provider.
func (s *RootSampler) SampleRoot(ctx context.Context, name string, kind trace.SpanKind) (trace.SpanContext, context.Context, bool) {
	psc := trace.SpanContextFromContext(ctx)
	if psc.TraceID().IsValid() {
		return trace.SpanContext{}, ctx, true
	}
	tid, sid := randomIDs()
	res := s.sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: name, Kind: kind})
	if res.Decision != sdktrace.Drop {
		return trace.SpanContext{}, &presetIDs{Context: ctx, tid: tid, sid: sid}, true
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: psc.TraceFlags() &^ trace.FlagsSampled, TraceState: res.Tracestate,
	}), ctx, false
}

// idGenerator is the SDK's random ID generator (the same draws from
// math/rand/v2), except that the ids a RootSampler drew for a root span it
// hands over are returned once for the span started under that context.
type idGenerator struct{}

// presetIDs is the context a RootSampler hands over a sampled root's ids
// in; taken makes them good for one span only.
type presetIDs struct {
	context.Context
	tid   trace.TraceID
	sid   trace.SpanID
	taken atomic.Bool
}

type presetIDsKey struct{}

func (p *presetIDs) Value(key any) any {
	if key == (presetIDsKey{}) {
		return p
	}
	return p.Context.Value(key)
}

// NewIDs returns the ids handed over in ctx the first time it is asked,
// and new random ids otherwise.
func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if p, ok := ctx.Value(presetIDsKey{}).(*presetIDs); ok && p.taken.CompareAndSwap(false, true) {
		return p.tid, p.sid
	}
	return randomIDs()
}

// NewSpanID returns a non-zero random span id.
func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	return randomSpanID()
}

// randomIDs returns a non-zero random trace id and span id, drawn as the
// SDK's default ID generator draws them.
func randomIDs() (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, randomSpanID()
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
