// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// fixedIDs is an SDK ID generator that returns the ids it is set to.
type fixedIDs struct {
	tid trace.TraceID
	sid trace.SpanID
}

func (f *fixedIDs) NewIDs(context.Context) (trace.TraceID, trace.SpanID) { return f.tid, f.sid }
func (f *fixedIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	return f.sid
}

// TestRootSamplerDecidesAsTheSDK: for every sampler a RootSampler holds, as
// OTEL_TRACES_SAMPLER selects it, SampleRoot's decision on each root is
// the one the SDK takes, by itself from the same variables, on the same
// trace id: a dropped root's span context is the SDK's non-recording
// span's (ids, flags, trace state, not remote), a sampled root is started
// by the RootSampler's provider with the ids SampleRoot drew, and the
// sampled ratios are the SDK's exactly.
func TestRootSamplerDecidesAsTheSDK(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=x")
	require.NoError(t, err)
	// A context whose span context has no trace id but flags and a trace
	// state, which the SDK carries over to a root's span context.
	odd := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceFlags: trace.FlagsRandom | trace.FlagsSampled, TraceState: ts,
	}))
	const roots = 4000
	for _, tc := range []struct {
		sampler, arg string
		min, max     int // sampled roots
	}{
		{"parentbased_traceidratio", "0.01", 10, 100},
		{"parentbased_traceidratio", " 0.5 ", 1600, 2400},
		{"PARENTBASED_TRACEIDRATIO", "", roots, roots},
		{"traceidratio", "0.25", 700, 1300},
		{"traceidratio", "0", 0, 0},
		{"always_off", "", 0, 0},
		{"parentbased_always_off", "0.5", 0, 0},
	} {
		t.Run(tc.sampler+"="+tc.arg, func(t *testing.T) {
			rs, err := NewRootSampler(tc.sampler, tc.arg)
			require.NoError(t, err)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(append(rs.TracerProviderOptions(), sdktrace.WithSpanProcessor(rec))...)
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

			// The reference: the SDK's own sampler from the variables,
			// drawing the ids it is told.
			t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.arg)
			ids := &fixedIDs{}
			ref := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(ids)).Tracer("ref")

			sampled, refSampled := 0, 0
			for i := range roots {
				ctx := context.Background()
				if i%2 == 1 {
					ctx = odd
				}
				sc, sctx, ok := rs.SampleRoot(ctx, "send a", trace.SpanKindProducer)
				if ok {
					sampled++
					p, isPreset := sctx.(*presetIDs)
					require.True(t, isPreset, "a sampled root hands its ids over")
					_, span := tp.Tracer("t").Start(sctx, "send a", trace.WithSpanKind(trace.SpanKindProducer))
					got := span.SpanContext()
					span.End()
					require.Equal(t, p.tid, got.TraceID())
					require.Equal(t, p.sid, got.SpanID())
					require.True(t, got.IsSampled())
					sc = got
				}
				ids.tid, ids.sid = sc.TraceID(), sc.SpanID()
				_, want := ref.Start(ctx, "send a", trace.WithSpanKind(trace.SpanKindProducer))
				if want.SpanContext().IsSampled() {
					refSampled++
				}
				require.Equal(t, want.SpanContext(), sc, "root %d", i)
				require.Equal(t, want.IsRecording(), ok)
			}
			assert.Equal(t, refSampled, sampled)
			assert.Len(t, rec.Ended(), sampled)
			assert.GreaterOrEqual(t, sampled, tc.min)
			assert.LessOrEqual(t, sampled, tc.max)
		})
	}
}

// TestRootSamplerOnlyForDeterministicSamplers: a sampler that does not
// decide roots from the trace id alone, or one the SDK would report as
// invalid, gets no RootSampler: the SDK keeps building and asking it.
func TestRootSamplerOnlyForDeterministicSamplers(t *testing.T) {
	for _, tc := range [][2]string{
		{"", ""}, {"always_on", ""}, {"parentbased_always_on", ""}, {"jaeger_remote", ""}, {"xray", ""},
		{"traceidratio", "x"}, {"traceidratio", "1.5"}, {"parentbased_traceidratio", "-0.1"},
	} {
		_, err := NewRootSampler(tc[0], tc[1])
		assert.Error(t, err, "%s=%s", tc[0], tc[1])
		assert.Nil(t, rootSamplerFromEnv(func(k string) string {
			return map[string]string{envTracesSampler: tc[0], envTracesSamplerArg: tc[1]}[k]
		}))
	}
	rs := rootSamplerFromEnv(func(k string) string {
		return map[string]string{envTracesSampler: "parentbased_traceidratio", envTracesSamplerArg: "0.01"}[k]
	})
	require.NotNil(t, rs)
	assert.Equal(t, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01)).Description(), rs.Sampler().Description())
}

// TestRootSamplerIDsGoodForOneSpan: ids handed over in a context serve the
// first root span started under it only; later ones, and a ctx with a
// parent, get ids of their own.
func TestRootSamplerIDsGoodForOneSpan(t *testing.T) {
	rs, err := NewRootSampler("traceidratio", "1")
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(rs.TracerProviderOptions()...)
	_, sctx, ok := rs.SampleRoot(context.Background(), "x", trace.SpanKindInternal)
	require.True(t, ok)
	tr := tp.Tracer("t")
	ctx, first := tr.Start(sctx, "x")
	_, second := tr.Start(sctx, "y")
	_, root := tr.Start(ctx, "z", trace.WithNewRoot())
	assert.Equal(t, sctx.(*presetIDs).tid, first.SpanContext().TraceID())
	assert.NotEqual(t, first.SpanContext().TraceID(), second.SpanContext().TraceID())
	assert.NotEqual(t, first.SpanContext().TraceID(), root.SpanContext().TraceID())

	sc, same, ok := rs.SampleRoot(ctx, "w", trace.SpanKindInternal)
	assert.True(t, ok, "a ctx with a trace id is left to the provider")
	assert.Equal(t, ctx, same)
	assert.False(t, sc.IsValid())
}

// TestRootSamplerDropAllocatesNothing: a dropped root costs no allocation.
func TestRootSamplerDropAllocatesNothing(t *testing.T) {
	rs, err := NewRootSampler("parentbased_traceidratio", "0")
	require.NoError(t, err)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, _, ok := rs.SampleRoot(ctx, "send a", trace.SpanKindProducer); ok {
			t.Fatal("sampled at ratio 0")
		}
	}))
}

// TestSetupRootSampler: Setup gives a RootSampler, and builds its tracer
// provider with it, for the samplers a RootSampler holds only.
func TestSetupRootSampler(t *testing.T) {
	for sampler, want := range map[string]bool{
		"": false, "parentbased_always_on": false, "always_on": false,
		"parentbased_traceidratio": true, "traceidratio": true, "always_off": true, "parentbased_always_off": true,
	} {
		t.Run(sampler, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0")
			p, err := Setup(t.Context(), WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			defer func() { _ = p.Shutdown(context.Background()) }()
			assert.Equal(t, want, p.RootSampler != nil)
			if !want {
				return
			}
			// The provider hands the ids over: a root SampleRoot lets
			// through (none at ratio 0 unless parent-based sampled) is
			// the one started.
			sc, _, ok := p.RootSampler.SampleRoot(t.Context(), "x", trace.SpanKindProducer)
			require.False(t, ok)
			_, span := p.TracerProvider.Tracer("t").Start(trace.ContextWithSpanContext(t.Context(), sc), "child")
			assert.Equal(t, sc.TraceID(), span.SpanContext().TraceID())
			assert.False(t, span.IsRecording())
		})
	}
}
