// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// exportBoth sends spans through otlptracehttp and through otlpwire, each
// to its own collector, and returns the two request bodies.
func exportBoth(t *testing.T, spans []sdktrace.ReadOnlySpan) (official, ours []byte) {
	t.Helper()
	ctx := t.Context()

	refSrv := newCollector(t)
	ref, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(refSrv.URL+"/v1/traces"))
	require.NoError(t, err)
	require.NoError(t, ref.ExportSpans(ctx, spans))
	require.NoError(t, ref.Shutdown(ctx))

	srv := newCollector(t)
	exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", Retry: otlpwire.DefaultRetry})
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(ctx, spans))
	require.NoError(t, exp.Shutdown(ctx))

	return refSrv.only(t).Body, srv.only(t).Body
}

// requireEquivalent decodes both bodies and requires them to be equal once
// resource groups are sorted and link trace states, which otlptracehttp
// does not send, are checked against want and removed.
func requireEquivalent(t *testing.T, spans []sdktrace.ReadOnlySpan, official, ours []byte) {
	t.Helper()
	ref, got := decode(t, official), decode(t, ours)
	checkLinkTraceStates(t, spans, got)
	sortResources(t, ref)
	sortResources(t, got)
	if !proto.Equal(ref, got) {
		t.Fatalf("requests differ; first difference:\n%s", firstDifference(ref, got))
	}
}

// firstDifference describes the first message that differs between two
// requests, descending to the first differing span.
func firstDifference(a, b *coltracepb.ExportTraceServiceRequest) string {
	show := func(what string, x, y proto.Message) string {
		return fmt.Sprintf("%s\notlptracehttp: %s\notlpwire:      %s", what,
			prototext.MarshalOptions{}.Format(x), prototext.MarshalOptions{}.Format(y))
	}
	if len(a.ResourceSpans) != len(b.ResourceSpans) {
		return fmt.Sprintf("%d resource groups, want %d", len(b.ResourceSpans), len(a.ResourceSpans))
	}
	for i, ra := range a.ResourceSpans {
		rb := b.ResourceSpans[i]
		if !proto.Equal(ra.Resource, rb.Resource) || ra.SchemaUrl != rb.SchemaUrl || len(ra.ScopeSpans) != len(rb.ScopeSpans) {
			ra, rb = proto.CloneOf(ra), proto.CloneOf(rb)
			ra.ScopeSpans, rb.ScopeSpans = nil, nil
			return show(fmt.Sprintf("resource group %d", i), ra, rb)
		}
		for j, sa := range ra.ScopeSpans {
			sb := rb.ScopeSpans[j]
			if !proto.Equal(sa.Scope, sb.Scope) || sa.SchemaUrl != sb.SchemaUrl || len(sa.Spans) != len(sb.Spans) {
				sa, sb = proto.CloneOf(sa), proto.CloneOf(sb)
				sa.Spans, sb.Spans = nil, nil
				return show(fmt.Sprintf("resource group %d, scope group %d", i, j), sa, sb)
			}
			for k, pa := range sa.Spans {
				if !proto.Equal(pa, sb.Spans[k]) {
					return show(fmt.Sprintf("resource group %d, scope group %d, span %d", i, j, k), pa, sb.Spans[k])
				}
			}
		}
	}
	return "none found"
}

// checkLinkTraceStates requires the links in req to carry the trace states
// of the input links (compared per linked span as sorted lists, as groups
// reorder spans), then clears them, as otlptracehttp leaves
// Link.trace_state empty.
func checkLinkTraceStates(t *testing.T, spans []sdktrace.ReadOnlySpan, req *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	type linked struct {
		trace trace.TraceID
		span  trace.SpanID
	}
	want, got := map[linked][]string{}, map[linked][]string{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		for _, l := range s.Links() {
			k := linked{l.SpanContext.TraceID(), l.SpanContext.SpanID()}
			want[k] = append(want[k], l.SpanContext.TraceState().String())
		}
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				for _, l := range s.Links {
					k := linked{trace.TraceID(l.TraceId), trace.SpanID(l.SpanId)}
					got[k] = append(got[k], l.TraceState)
					l.TraceState = ""
				}
			}
		}
	}
	for _, m := range []map[linked][]string{want, got} {
		for _, v := range m {
			slices.Sort(v)
		}
	}
	assert.Equal(t, want, got, "link trace states")
}

// sortResources orders resource groups by their resource, as
// otlptracehttp emits them in map order.
func sortResources(t *testing.T, req *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	key := func(m proto.Message) string {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	slices.SortStableFunc(req.ResourceSpans, func(a, b *tracepb.ResourceSpans) int {
		return strings.Compare(key(a.GetResource())+a.SchemaUrl, key(b.GetResource())+b.SchemaUrl)
	})
}

var (
	// schemaURL is any schema URL; the encoder copies it.
	schemaURL = "https://opentelemetry.io/schemas/1.26.0"
	unicode   = "ünïcödé ✓ 日本語 🚀"
)

// everyAttribute returns one attribute of every attribute.Type, with edge
// values: empty strings and slices, unicode, extreme numbers, nesting.
func everyAttribute() []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Bool("bool.true", true),
		attribute.Bool("bool.false", false),
		attribute.Int64("int.zero", 0),
		attribute.Int64("int.negative", -1),
		attribute.Int64("int.min", math.MinInt64),
		attribute.Int64("int.max", math.MaxInt64),
		attribute.Float64("float.zero", 0),
		attribute.Float64("float.negzero", math.Copysign(0, -1)),
		attribute.Float64("float.pi", math.Pi),
		attribute.Float64("float.inf", math.Inf(-1)),
		attribute.Float64("float.nan", math.NaN()),
		attribute.String("string.empty", ""),
		attribute.String("string.unicode", unicode),
		attribute.String(unicode, "unicode key"),
		attribute.String("", "empty key"),
		attribute.String("string.long", strings.Repeat("x", 70_000)), // 3-byte length varints
		attribute.BoolSlice("bools", []bool{true, false, true}),
		attribute.BoolSlice("bools.empty", []bool{}),
		attribute.Int64Slice("ints", []int64{0, -7, math.MaxInt64}),
		attribute.IntSlice("ints.long", []int{1, 2, 3, 4, 5, 6, 7}),
		attribute.Float64Slice("floats", []float64{0, -1.5, math.Inf(1)}),
		attribute.StringSlice("strings", []string{"", "a", unicode}),
		attribute.StringSlice("strings.empty", nil),
		attribute.ByteSlice("bytes", []byte{0, 1, 0xff}),
		attribute.ByteSlice("bytes.empty", nil),
		attribute.Slice("slice",
			attribute.StringValue("s"), attribute.IntValue(1), attribute.BoolValue(false),
			attribute.Float64Value(2.5), attribute.SliceValue(attribute.StringValue("nested")),
			attribute.MapValue(attribute.String("k", "v")), attribute.Value{}),
		attribute.Slice("slice.empty"),
		attribute.Map("map",
			attribute.String("b", "2"), attribute.Int("a", 1),
			attribute.Map("nested", attribute.StringSlice("ss", []string{"x"})),
			attribute.KeyValue{Key: "empty"}),
		attribute.Map("map.empty"),
		{Key: "empty.value"}, // attribute.EMPTY
	}
}

// providerSpans records spans from two tracer providers (two resources),
// several tracers (scopes with and without version, schema URL and
// attributes), span limits that drop attributes, events and links, remote
// parents with trace state, links and every status.
func providerSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	limits := sdktrace.NewSpanLimits()
	limits.AttributeCountLimit = len(everyAttribute()) + 2
	limits.EventCountLimit = 3
	limits.LinkCountLimit = 4
	limits.AttributePerEventCountLimit = 4
	limits.AttributePerLinkCountLimit = 2

	resA, err := resource.Merge(resource.Default(), resource.NewWithAttributes(resource.Default().SchemaURL(),
		attribute.String("service.name", "relay"), attribute.String("host.name", unicode), attribute.Int("process.pid", 42)))
	require.NoError(t, err)
	resB := resource.NewSchemaless(attribute.String("service.name", "other"), attribute.StringSlice("tags", []string{"a", ""}))
	newTP := func(res *resource.Resource) *sdktrace.TracerProvider {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec),
			sdktrace.WithRawSpanLimits(limits), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return tp
	}
	tpA, tpB := newTP(resA), newTP(resB)

	full := tpA.Tracer("github.com/kretrieve/kretrieve/kafkatrace",
		trace.WithInstrumentationVersion("1.2.3"), trace.WithSchemaURL(schemaURL),
		trace.WithInstrumentationAttributes(attribute.String("scope.attr", unicode), attribute.Bool("scope.flag", true)))
	plain := tpA.Tracer("plain")
	versioned := tpA.Tracer("plain", trace.WithInstrumentationVersion("2")) // a different scope
	other := tpB.Tracer("other", trace.WithSchemaURL("https://example.com/schema"))

	ts, err := trace.ParseTraceState("vendor=abc,other=x-1")
	require.NoError(t, err)
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xde, 0xad, 0xbe, 0xef, 1}, SpanID: trace.SpanID{0xca, 0xfe, 1},
		TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true,
	})
	remoteUnsampled := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{2}, SpanID: trace.SpanID{2}, Remote: true,
	})
	localLinked := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{3}, SpanID: trace.SpanID{3}, TraceFlags: trace.FlagsSampled, TraceState: ts,
	})
	link := func(sc trace.SpanContext, kvs ...attribute.KeyValue) trace.Link {
		return trace.Link{SpanContext: sc, Attributes: kvs}
	}
	start := time.Date(2026, 3, 4, 5, 6, 7, 890123456, time.UTC)
	at := func(d time.Duration) trace.SpanStartEventOption { return trace.WithTimestamp(start.Add(d)) }

	// A consumer span continuing a remote trace, with every attribute type,
	// more attributes, events and links than the limits allow, and an
	// error status.
	ctx := trace.ContextWithRemoteSpanContext(t.Context(), remote)
	ctx, process := full.Start(ctx, "process relay.requests", trace.WithSpanKind(trace.SpanKindConsumer), at(0),
		trace.WithAttributes(everyAttribute()...),
		// The oldest links and events go first when over the limit.
		trace.WithLinks(
			link(localLinked),         // dropped
			link(trace.SpanContext{}), // invalid: ignored, not counted
			link(trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{4}, SpanID: trace.SpanID{4}})),
			link(remote, attribute.String("messaging.operation.name", "receive")),
			link(remoteUnsampled, attribute.Int("a", 1), attribute.Int("b", 2), attribute.Int("c", 3)),
		))
	process.SetAttributes(attribute.String("late.1", "x"), attribute.String("late.2", "y"), attribute.String("late.3", "z"))
	process.AddEvent("dropped", trace.WithTimestamp(start.Add(time.Millisecond)))
	process.AddEvent(unicode, trace.WithTimestamp(start.Add(2*time.Millisecond)))
	process.AddEvent("", trace.WithTimestamp(start.Add(3*time.Millisecond)), trace.WithAttributes(attribute.String("k", "")))
	process.AddEvent("last", trace.WithTimestamp(start.Add(4*time.Millisecond)), trace.WithAttributes(everyAttribute()[:6]...))
	process.AddLink(link(trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{5}, SpanID: trace.SpanID{5}, Remote: true})))
	process.SetStatus(codes.Error, "boom: "+unicode)

	// Children in several scopes, interleaved, with each status and kind.
	for i, tr := range []trace.Tracer{plain, full, versioned, plain, other, full} {
		kind := trace.SpanKind(i%6 + 0)
		_, child := tr.Start(ctx, "child", trace.WithSpanKind(kind), at(time.Duration(i)*time.Microsecond),
			trace.WithAttributes(attribute.Int("i", i), attribute.String("messaging.system", "kafka")))
		switch i % 3 {
		case 0:
			child.SetStatus(codes.Ok, "ignored for Ok")
		case 1:
			child.SetStatus(codes.Error, "")
		}
		child.End(trace.WithTimestamp(start.Add(time.Duration(i+1) * time.Millisecond)))
	}
	// A root span in a fresh trace, and one under an unsampled remote
	// parent (sampled here by AlwaysSample).
	_, root := other.Start(t.Context(), "root", trace.WithNewRoot())
	root.End()
	_, orphan := plain.Start(trace.ContextWithRemoteSpanContext(t.Context(), remoteUnsampled), "orphan")
	orphan.End()
	process.End(trace.WithTimestamp(start.Add(time.Second)))

	return rec.Ended()
}

// stubSpans are spans the SDK would not produce, built directly: no
// resource, the zero scope, zero times and IDs, unknown kind, negative and
// huge dropped counts, unsampled flags.
func stubSpans() []sdktrace.ReadOnlySpan {
	ts, _ := trace.ParseTraceState("k=v")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{9}, TraceState: ts})
	scopeOnlyAttrs := instrumentation.Scope{Attributes: attribute.NewSet(attribute.String("only", "attrs"))}
	stubs := tracetest.SpanStubs{
		{},
		{Name: "zero scope", SpanContext: sc, SpanKind: trace.SpanKind(42), DroppedAttributes: -1,
			DroppedEvents: math.MaxInt32, DroppedLinks: math.MaxInt, Status: sdktrace.Status{Code: codes.Unset, Description: "unset"},
			Attributes: everyAttribute(),
			Events:     []sdktrace.Event{{}, {Name: "e", DroppedAttributeCount: 3}},
			Links: []sdktrace.Link{{}, {SpanContext: sc, DroppedAttributeCount: 2,
				Attributes: []attribute.KeyValue{attribute.Map("m")}}},
		},
		{Name: "empty resource", Resource: resource.Empty(), InstrumentationScope: scopeOnlyAttrs,
			StartTime: time.Unix(0, 1), EndTime: time.Unix(-5, 0)},
		{Name: "schema only", Resource: resource.NewWithAttributes(schemaURL), InstrumentationScope: instrumentation.Scope{SchemaURL: schemaURL}},
	}
	return stubs.Snapshots()
}

// requireCoverage requires the spans of providerSpans to exercise what
// the equivalence test is meant to cover, so that it cannot pass vacuously.
func requireCoverage(t *testing.T, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	resources, scopes := map[attribute.Distinct]bool{}, map[instrumentation.Scope]bool{}
	var droppedAttrs, droppedEvents, droppedLinks, droppedEventAttrs, droppedLinkAttrs, remoteParent, remoteLink, linkState, errorMsg bool
	types := map[attribute.Type]bool{}
	var walk func(v attribute.Value)
	walk = func(v attribute.Value) {
		types[v.Type()] = true
		for _, e := range v.AsSlice() {
			walk(e)
		}
		for _, kv := range v.AsMap() {
			walk(kv.Value)
		}
	}
	for _, s := range spans {
		resources[s.Resource().Equivalent()] = true
		scopes[s.InstrumentationScope()] = true
		droppedAttrs = droppedAttrs || s.DroppedAttributes() > 0
		droppedEvents = droppedEvents || s.DroppedEvents() > 0
		droppedLinks = droppedLinks || s.DroppedLinks() > 0
		remoteParent = remoteParent || s.Parent().IsRemote()
		errorMsg = errorMsg || s.Status().Code == codes.Error && s.Status().Description != ""
		for _, e := range s.Events() {
			droppedEventAttrs = droppedEventAttrs || e.DroppedAttributeCount > 0
		}
		for _, l := range s.Links() {
			droppedLinkAttrs = droppedLinkAttrs || l.DroppedAttributeCount > 0
			remoteLink = remoteLink || l.SpanContext.IsRemote()
			linkState = linkState || l.SpanContext.TraceState().Len() > 0
		}
		for _, kv := range s.Attributes() {
			walk(kv.Value)
		}
	}
	assert.Len(t, resources, 2)
	assert.GreaterOrEqual(t, len(scopes), 4)
	for name, ok := range map[string]bool{
		"dropped attributes": droppedAttrs, "dropped events": droppedEvents, "dropped links": droppedLinks,
		"dropped event attributes": droppedEventAttrs, "dropped link attributes": droppedLinkAttrs,
		"remote parent": remoteParent, "remote link": remoteLink, "link trace state": linkState,
		"error status with message": errorMsg,
	} {
		assert.True(t, ok, name)
	}
	for typ := attribute.EMPTY; typ <= attribute.MAP; typ++ {
		assert.True(t, types[typ], "attribute type %s", typ)
	}
}

func TestEquivalentToOTLPTraceHTTP(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans func(t *testing.T) []sdktrace.ReadOnlySpan
	}{
		{name: "tracer providers", spans: func(t *testing.T) []sdktrace.ReadOnlySpan {
			spans := providerSpans(t)
			requireCoverage(t, spans)
			return spans
		}},
		{name: "stubs", spans: func(*testing.T) []sdktrace.ReadOnlySpan { return stubSpans() }},
		{name: "mixed with nil spans", spans: func(t *testing.T) []sdktrace.ReadOnlySpan {
			spans := append([]sdktrace.ReadOnlySpan{nil}, stubSpans()...)
			spans = append(spans, nil)
			return append(spans, providerSpans(t)...)
		}},
		{name: "many scopes", spans: func(t *testing.T) []sdktrace.ReadOnlySpan {
			var stubs tracetest.SpanStubs
			res := resource.NewSchemaless(attribute.String("service.name", "many"))
			for i := range 100 {
				stubs = append(stubs, tracetest.SpanStub{
					Name:                 "s",
					SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(i), 1}}),
					Resource:             res,
					InstrumentationScope: instrumentation.Scope{Name: string(rune('a' + i%40))},
				})
			}
			return stubs.Snapshots()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := tc.spans(t)
			official, ours := exportBoth(t, spans)
			requireEquivalent(t, spans, official, ours)
		})
	}
}

// With a single resource the groups come out in the same order, and with no
// link trace state the two bodies are byte for byte the same: proto.Marshal
// writes fields in number order, as the encoder does.
func TestSameBytesAsOTLPTraceHTTP(t *testing.T) {
	all := tracetest.SpanStubsFromReadOnlySpans(providerSpans(t))
	var stubs tracetest.SpanStubs
	for _, s := range all {
		if !s.Resource.Equal(all[0].Resource) {
			continue
		}
		for i := range s.Links {
			s.Links[i].SpanContext = s.Links[i].SpanContext.WithTraceState(trace.TraceState{})
		}
		stubs = append(stubs, s)
	}
	require.Greater(t, len(stubs), 5)
	official, ours := exportBoth(t, stubs.Snapshots())
	assert.True(t, bytes.Equal(official, ours), "bodies differ")
}

func TestEmptyBatchSendsNothing(t *testing.T) {
	srv := newCollector(t)
	exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", Retry: otlpwire.DefaultRetry})
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(t.Context(), nil))
	require.NoError(t, exp.ExportSpans(t.Context(), []sdktrace.ReadOnlySpan{nil, nil}))
	require.NoError(t, exp.Shutdown(t.Context()))
	assert.Empty(t, srv.Requests())
}

// FuzzEquivalence compares the exporters on batches of random spans,
// generated from the seed: random attribute values of every type (nested
// ones too), names, IDs, flags, kinds, statuses, times, events, links,
// resources and scopes. Besides fixed seeds, every run tries one new seed;
// go test -fuzz FuzzEquivalence explores more.
func FuzzEquivalence(f *testing.F) {
	for seed := range uint64(20) {
		f.Add(seed)
	}
	f.Add(uint64(time.Now().UnixNano()))
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 0x6b72))
		spans := randomSpans(rng, 1+rng.IntN(60))
		official, ours := exportBoth(t, spans)
		requireEquivalent(t, spans, official, ours)
	})
}

func randomSpans(rng *rand.Rand, n int) []sdktrace.ReadOnlySpan {
	resources := []*resource.Resource{
		nil,
		resource.NewSchemaless(randomAttrs(rng, 3, 0)...),
		resource.NewWithAttributes(schemaURL, randomAttrs(rng, 5, 0)...),
	}
	scopes := []instrumentation.Scope{
		{},
		{Name: randomString(rng)},
		{Name: "s", Version: randomString(rng), SchemaURL: randomString(rng), Attributes: attribute.NewSet(randomAttrs(rng, 2, 0)...)},
	}
	stubs := make(tracetest.SpanStubs, n)
	for i := range stubs {
		stubs[i] = tracetest.SpanStub{
			Name:                 randomString(rng),
			SpanContext:          randomSpanContext(rng),
			Parent:               randomSpanContext(rng),
			SpanKind:             trace.SpanKind(rng.IntN(7)),
			StartTime:            time.Unix(0, rng.Int64()),
			EndTime:              time.Unix(0, rng.Int64()),
			Attributes:           randomAttrs(rng, rng.IntN(15), 0),
			DroppedAttributes:    rng.IntN(3),
			DroppedEvents:        rng.IntN(3),
			DroppedLinks:         rng.IntN(3),
			Status:               sdktrace.Status{Code: codes.Code(rng.IntN(4)), Description: randomString(rng)},
			Resource:             resources[rng.IntN(len(resources))],
			InstrumentationScope: scopes[rng.IntN(len(scopes))],
		}
		for range rng.IntN(3) {
			stubs[i].Events = append(stubs[i].Events, sdktrace.Event{
				Name: randomString(rng), Time: time.Unix(0, rng.Int64()),
				Attributes: randomAttrs(rng, rng.IntN(4), 0), DroppedAttributeCount: rng.IntN(2),
			})
		}
		for range rng.IntN(3) {
			stubs[i].Links = append(stubs[i].Links, sdktrace.Link{
				SpanContext: randomSpanContext(rng), Attributes: randomAttrs(rng, rng.IntN(4), 0),
				DroppedAttributeCount: rng.IntN(2),
			})
		}
	}
	return stubs.Snapshots()
}

func randomSpanContext(rng *rand.Rand) trace.SpanContext {
	var cfg trace.SpanContextConfig
	if rng.IntN(5) > 0 {
		for i := range cfg.TraceID {
			cfg.TraceID[i] = byte(rng.Uint32())
		}
		for i := range cfg.SpanID {
			cfg.SpanID[i] = byte(rng.Uint32())
		}
	}
	cfg.TraceFlags = trace.TraceFlags(rng.Uint32() & 0xff)
	cfg.Remote = rng.IntN(2) == 0
	if rng.IntN(3) == 0 {
		cfg.TraceState, _ = trace.ParseTraceState("a=" + string(rune('a'+rng.IntN(26))) + ",vendor@t=1")
	}
	return trace.NewSpanContext(cfg)
}

func randomAttrs(rng *rand.Rand, n, depth int) []attribute.KeyValue {
	kvs := make([]attribute.KeyValue, n)
	for i := range kvs {
		kvs[i] = attribute.KeyValue{Key: attribute.Key(randomString(rng)), Value: randomValue(rng, depth)}
	}
	return kvs
}

func randomValue(rng *rand.Rand, depth int) attribute.Value {
	n := rng.IntN(4)
	maxType := 12
	if depth >= 2 {
		maxType = 10 // no deeper nesting
	}
	switch rng.IntN(maxType) {
	case 0:
		return attribute.Value{}
	case 1:
		return attribute.BoolValue(rng.IntN(2) == 0)
	case 2:
		return attribute.Int64Value(int64(rng.Uint64()))
	case 3:
		return attribute.Float64Value(randomFloat(rng))
	case 4:
		return attribute.StringValue(randomString(rng))
	case 5:
		return attribute.BoolSliceValue(randomSlice(rng, n, func() bool { return rng.IntN(2) == 0 }))
	case 6:
		return attribute.Int64SliceValue(randomSlice(rng, n, func() int64 { return int64(rng.Uint64()) }))
	case 7:
		return attribute.Float64SliceValue(randomSlice(rng, n, func() float64 { return randomFloat(rng) }))
	case 8:
		return attribute.StringSliceValue(randomSlice(rng, n, func() string { return randomString(rng) }))
	case 9:
		return attribute.ByteSliceValue([]byte(randomString(rng)))
	case 10:
		return attribute.SliceValue(randomSlice(rng, n, func() attribute.Value { return randomValue(rng, depth+1) })...)
	default:
		return attribute.MapValue(randomAttrs(rng, n, depth+1)...)
	}
}

func randomSlice[T any](_ *rand.Rand, n int, f func() T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = f()
	}
	return s
}

func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(6) {
	case 0:
		return 0
	case 1:
		return math.NaN()
	case 2:
		return math.Inf(rng.IntN(2)*2 - 1)
	default:
		return math.Float64frombits(rng.Uint64())
	}
}

// randomString returns valid UTF-8 (protobuf strings must be) of 0 to ~200
// bytes: ASCII, multi-byte runes, and sometimes long enough for a 2-byte
// length.
func randomString(rng *rand.Rand) string {
	runes := []rune{'a', 'Z', '0', ' ', '=', ',', 'é', '日', '🚀', 0}
	var b strings.Builder
	n := rng.IntN(12)
	if rng.IntN(10) == 0 {
		n = 40 + rng.IntN(100)
	}
	for range n {
		b.WriteRune(runes[rng.IntN(len(runes))])
	}
	return b.String()
}
