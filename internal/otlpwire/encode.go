// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"math"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of opentelemetry-proto: collector/trace/v1/trace_service.proto,
// trace/v1/trace.proto, common/v1/common.proto and resource/v1/resource.proto.
const (
	requestResourceSpans protowire.Number = 1 // ExportTraceServiceRequest.resource_spans

	resourceSpansResource   protowire.Number = 1
	resourceSpansScopeSpans protowire.Number = 2
	resourceSpansSchemaURL  protowire.Number = 3

	resourceAttributes protowire.Number = 1 // Resource.attributes

	scopeSpansScope     protowire.Number = 1
	scopeSpansSpans     protowire.Number = 2
	scopeSpansSchemaURL protowire.Number = 3

	scopeName       protowire.Number = 1 // InstrumentationScope
	scopeVersion    protowire.Number = 2
	scopeAttributes protowire.Number = 3

	spanTraceID           protowire.Number = 1
	spanSpanID            protowire.Number = 2
	spanTraceState        protowire.Number = 3
	spanParentSpanID      protowire.Number = 4
	spanName              protowire.Number = 5
	spanKind              protowire.Number = 6
	spanStartTime         protowire.Number = 7
	spanEndTime           protowire.Number = 8
	spanAttributes        protowire.Number = 9
	spanDroppedAttributes protowire.Number = 10
	spanEvents            protowire.Number = 11
	spanDroppedEvents     protowire.Number = 12
	spanLinks             protowire.Number = 13
	spanDroppedLinks      protowire.Number = 14
	spanStatus            protowire.Number = 15
	spanFlags             protowire.Number = 16

	eventTime              protowire.Number = 1 // Span.Event
	eventName              protowire.Number = 2
	eventAttributes        protowire.Number = 3
	eventDroppedAttributes protowire.Number = 4

	linkTraceID           protowire.Number = 1 // Span.Link
	linkSpanID            protowire.Number = 2
	linkTraceState        protowire.Number = 3
	linkAttributes        protowire.Number = 4
	linkDroppedAttributes protowire.Number = 5
	linkFlags             protowire.Number = 6

	statusMessage protowire.Number = 2 // Status
	statusCode    protowire.Number = 3

	keyValueKey   protowire.Number = 1 // KeyValue
	keyValueValue protowire.Number = 2

	anyString protowire.Number = 1 // AnyValue oneof value
	anyBool   protowire.Number = 2
	anyInt    protowire.Number = 3
	anyDouble protowire.Number = 4
	anyArray  protowire.Number = 5
	anyKvlist protowire.Number = 6
	anyBytes  protowire.Number = 7

	arrayValues  protowire.Number = 1 // ArrayValue.values
	kvlistValues protowire.Number = 1 // KeyValueList.values
)

// One-byte tags of the fields written on the hot paths.
const (
	tagAnyString     = byte(anyString<<3 | protowire.Number(protowire.BytesType))
	tagAnyBool       = byte(anyBool<<3 | protowire.Number(protowire.VarintType))
	tagAnyInt        = byte(anyInt<<3 | protowire.Number(protowire.VarintType))
	tagAnyDouble     = byte(anyDouble<<3 | protowire.Number(protowire.Fixed64Type))
	tagKeyValueKey   = byte(keyValueKey<<3 | protowire.Number(protowire.BytesType))
	tagKeyValueValue = byte(keyValueValue<<3 | protowire.Number(protowire.BytesType))
	tagSpanTraceID   = byte(spanTraceID<<3 | protowire.Number(protowire.BytesType))
	tagSpanSpanID    = byte(spanSpanID<<3 | protowire.Number(protowire.BytesType))
	tagSpanParent    = byte(spanParentSpanID<<3 | protowire.Number(protowire.BytesType))
	tagSpanName      = byte(spanName<<3 | protowire.Number(protowire.BytesType))
	tagSpanKind      = byte(spanKind<<3 | protowire.Number(protowire.VarintType))
	tagSpanStart     = byte(spanStartTime<<3 | protowire.Number(protowire.Fixed64Type))
	tagSpanEnd       = byte(spanEndTime<<3 | protowire.Number(protowire.Fixed64Type))
)

// SpanFlags bits (trace/v1/trace.proto) set above the W3C trace flags.
const (
	flagContextHasIsRemote = 0x100
	flagContextIsRemote    = 0x200
)

// Status.StatusCode values.
const (
	statusCodeOK    = 1
	statusCodeError = 2
)

// linearScopes is how many scope groups are looked up by a linear scan
// before the encoder switches to a map.
const linearScopes = 16

// encoder turns a batch of spans into the body of an
// ExportTraceServiceRequest. Its buffers are reused from one batch to the
// next, so an encoder must not be used concurrently.
type encoder struct {
	buf revBuf

	resources []resourceGroup
	scopes    []scopeGroup
	index     map[groupKey]int // scope groups by key once there are many
	groupOf   []int32          // scope group of each input span, -1 for nil
	order     []int32          // input indices ordered by scope group
}

// resourceGroup is one ResourceSpans: spans whose resources have the same
// attributes. As in otlptracehttp, the first span's resource supplies the
// schema URL.
type resourceGroup struct {
	key attribute.Distinct
	res *resource.Resource
}

// scopeGroup is one ScopeSpans: the spans of one instrumentation scope
// within one resource group, order[start:start+count].
type scopeGroup struct {
	resource     int
	scope        instrumentation.Scope
	start, count int
}

type groupKey struct {
	resource int
	scope    instrumentation.Scope
}

// encode encodes spans as an ExportTraceServiceRequest and returns the
// number of spans encoded (nil spans are skipped). The body is
// e.buf.bytes(), valid until the next call.
//
// Spans are grouped by resource, then by instrumentation scope, each group
// in the order its first span appears and each group's spans in input
// order, as otlptracehttp does (except that its resource groups come out
// in map order).
func (e *encoder) encode(spans []sdktrace.ReadOnlySpan) int {
	n := e.group(spans)
	w := &e.buf
	w.reset()
	for r := len(e.resources) - 1; r >= 0; r-- {
		mark := w.len()
		rg := &e.resources[r]
		w.stringField(resourceSpansSchemaURL, rg.res.SchemaURL())
		for s := len(e.scopes) - 1; s >= 0; s-- {
			if e.scopes[s].resource == r {
				e.scopeSpans(spans, &e.scopes[s])
			}
		}
		if rg.res != nil {
			m := w.len()
			e.attributeSet(resourceAttributes, rg.res.Set())
			w.lenTag(resourceSpansResource, m)
		}
		w.lenTag(requestResourceSpans, mark)
	}
	// Drop references to resources and scope attributes until next time.
	clear(e.resources)
	clear(e.scopes)
	clear(e.index)
	return n
}

// group assigns every non-nil span to a scope group and fills e.order.
func (e *encoder) group(spans []sdktrace.ReadOnlySpan) int {
	e.resources = e.resources[:0]
	e.scopes = e.scopes[:0]
	e.groupOf = slices.Grow(e.groupOf[:0], len(spans))[:len(spans)]

	n, last := 0, -1
	var lastRes *resource.Resource
	var lastScope instrumentation.Scope
	for i, sd := range spans {
		if sd == nil {
			e.groupOf[i] = -1
			continue
		}
		n++
		// Consecutive spans usually share their group: compare the
		// resource pointer and the scope before any lookup.
		res, scope := sd.Resource(), sd.InstrumentationScope()
		if last < 0 || res != lastRes || scope != lastScope {
			last = e.scopeGroup(res, scope)
			lastRes, lastScope = res, scope
		}
		e.groupOf[i] = int32(last)
		e.scopes[last].count++
	}

	start := 0
	for i := range e.scopes {
		g := &e.scopes[i]
		g.start, start, g.count = start, start+g.count, 0
	}
	e.order = slices.Grow(e.order[:0], n)[:n]
	for i, g := range e.groupOf {
		if g < 0 {
			continue
		}
		sg := &e.scopes[g]
		e.order[sg.start+sg.count] = int32(i)
		sg.count++
	}
	return n
}

// scopeGroup returns the index of the scope group of (res, scope), adding
// the resource and scope groups when they are new.
func (e *encoder) scopeGroup(res *resource.Resource, scope instrumentation.Scope) int {
	key := res.Equivalent()
	r := slices.IndexFunc(e.resources, func(g resourceGroup) bool { return g.key == key })
	if r < 0 {
		r = len(e.resources)
		e.resources = append(e.resources, resourceGroup{key: key, res: res})
	}
	if len(e.scopes) <= linearScopes {
		for i := range e.scopes {
			if e.scopes[i].resource == r && e.scopes[i].scope == scope {
				return i
			}
		}
	} else if i, ok := e.index[groupKey{r, scope}]; ok {
		return i
	}
	i := len(e.scopes)
	e.scopes = append(e.scopes, scopeGroup{resource: r, scope: scope})
	if len(e.scopes) > linearScopes {
		if e.index == nil {
			e.index = make(map[groupKey]int)
		}
		if len(e.index) == 0 { // just crossed the threshold: index every group
			for j := range e.scopes {
				e.index[groupKey{e.scopes[j].resource, e.scopes[j].scope}] = j
			}
		} else {
			e.index[groupKey{r, scope}] = i
		}
	}
	return i
}

func (e *encoder) scopeSpans(spans []sdktrace.ReadOnlySpan, g *scopeGroup) {
	w := &e.buf
	mark := w.len()
	w.stringField(scopeSpansSchemaURL, g.scope.SchemaURL)
	idx := e.order[g.start : g.start+g.count]
	for i := len(idx) - 1; i >= 0; i-- {
		e.span(spans[idx[i]])
	}
	// Like otlptracehttp, the zero scope is sent as no scope at all.
	if g.scope != (instrumentation.Scope{}) {
		m := w.len()
		e.attributeSet(scopeAttributes, &g.scope.Attributes)
		w.stringField(scopeVersion, g.scope.Version)
		w.stringField(scopeName, g.scope.Name)
		w.lenTag(scopeSpansScope, m)
	}
	w.lenTag(resourceSpansScopeSpans, mark)
}

func (e *encoder) span(sd sdktrace.ReadOnlySpan) {
	w := &e.buf
	mark := w.len()
	sc, parent := sd.SpanContext(), sd.Parent()

	w.fixed32Field(spanFlags, flags(sc.TraceFlags(), parent.IsRemote()))

	// Status is always present, even when unset.
	st := sd.Status()
	m := w.len()
	w.varintField(statusCode, statusCodeOf(st.Code))
	w.stringField(statusMessage, st.Description)
	w.lenTag(spanStatus, m)

	w.varintField(spanDroppedLinks, clampUint32(sd.DroppedLinks()))
	links := sd.Links()
	for i := len(links) - 1; i >= 0; i-- {
		e.link(&links[i])
	}
	w.varintField(spanDroppedEvents, clampUint32(sd.DroppedEvents()))
	events := sd.Events()
	for i := len(events) - 1; i >= 0; i-- {
		e.event(&events[i])
	}
	w.varintField(spanDroppedAttributes, clampUint32(sd.DroppedAttributes()))
	e.keyValues(spanAttributes, sd.Attributes())

	// Fields 8 to 4 and 2 to 1 have bounded sizes: reserve, then write
	// without checks.
	name := sd.Name()
	w.reserve(len(name) + 2*(1+8) + 2*(1+maxVarint) + 1 + 1 + 8)
	if t := unixNano(sd.EndTime()); t != 0 {
		w.putFixed64(t)
		w.putByte(tagSpanEnd)
	}
	if t := unixNano(sd.StartTime()); t != 0 {
		w.putFixed64(t)
		w.putByte(tagSpanStart)
	}
	if k := spanKindOf(sd.SpanKind()); k != 0 {
		w.putVarint(k)
		w.putByte(tagSpanKind)
	}
	if name != "" {
		w.putString(name)
		w.putVarint(uint64(len(name)))
		w.putByte(tagSpanName)
	}
	if psid := parent.SpanID(); psid.IsValid() {
		w.putBytes(psid[:])
		w.putByte(byte(len(psid)))
		w.putByte(tagSpanParent)
	}
	e.traceState(spanTraceState, sc.TraceState())
	sid, tid := sc.SpanID(), sc.TraceID()
	w.reserve(2 + len(sid) + 2 + len(tid))
	w.putBytes(sid[:])
	w.putByte(byte(len(sid)))
	w.putByte(tagSpanSpanID)
	w.putBytes(tid[:])
	w.putByte(byte(len(tid)))
	w.putByte(tagSpanTraceID)

	w.lenTag(scopeSpansSpans, mark)
}

func (e *encoder) event(ev *sdktrace.Event) {
	w := &e.buf
	mark := w.len()
	w.varintField(eventDroppedAttributes, clampUint32(ev.DroppedAttributeCount))
	e.keyValues(eventAttributes, ev.Attributes)
	w.stringField(eventName, ev.Name)
	w.fixed64Field(eventTime, unixNano(ev.Time))
	w.lenTag(spanEvents, mark)
}

// link encodes a span link. Unlike otlptracehttp v1.47, which leaves
// Link.trace_state empty, it sends the linked context's trace state.
func (e *encoder) link(l *sdktrace.Link) {
	w := &e.buf
	mark := w.len()
	sc := l.SpanContext
	w.fixed32Field(linkFlags, flags(sc.TraceFlags(), sc.IsRemote()))
	w.varintField(linkDroppedAttributes, clampUint32(l.DroppedAttributeCount))
	e.keyValues(linkAttributes, l.Attributes)
	e.traceState(linkTraceState, sc.TraceState())
	sid := sc.SpanID()
	w.bytesAlways(linkSpanID, sid[:])
	tid := sc.TraceID()
	w.bytesAlways(linkTraceID, tid[:])
	w.lenTag(spanLinks, mark)
}

// traceState writes ts in its W3C form (ts.String()) without building the
// string.
func (e *encoder) traceState(num protowire.Number, ts trace.TraceState) {
	members := ts.Len()
	if members == 0 {
		return
	}
	n := 2*members - 1 // '=' per member, ',' between members
	ts.Walk(func(k, v string) bool {
		n += len(k) + len(v)
		return true
	})
	w := &e.buf
	w.reserve(n)
	w.off -= n
	p := w.b[w.off : w.off+n]
	i := 0
	ts.Walk(func(k, v string) bool {
		if i > 0 {
			p[i] = ','
			i++
		}
		i += copy(p[i:], k)
		p[i] = '='
		i++
		i += copy(p[i:], v)
		return true
	})
	w.varint(uint64(n))
	w.tag(num, protowire.BytesType)
}

// attributeSet writes the attributes of a set (a resource's or a scope's),
// in the set's order.
func (e *encoder) attributeSet(num protowire.Number, set *attribute.Set) {
	for i := set.Len() - 1; i >= 0; i-- {
		kv, _ := set.Get(i)
		e.keyValue(num, &kv)
	}
}

func (e *encoder) keyValues(num protowire.Number, kvs []attribute.KeyValue) {
	for i := len(kvs) - 1; i >= 0; i-- {
		e.keyValue(num, &kvs[i])
	}
}

// keyValue writes kv as a KeyValue field numbered num.
func (e *encoder) keyValue(num protowire.Number, kv *attribute.KeyValue) {
	w := &e.buf
	v := &kv.Value
	var s string
	switch v.Type() {
	case attribute.STRING:
		s = v.AsString()
	case attribute.BOOL, attribute.INT64, attribute.FLOAT64:
	default:
		mark := w.len()
		e.anyValue(keyValueValue, v) // always present, even when EMPTY
		w.stringField(keyValueKey, string(kv.Key))
		w.lenTag(num, mark)
		return
	}

	// The hot path: a scalar value. Reserve an upper bound once (4 tags, 4
	// varints, the strings) and write without further checks.
	key := string(kv.Key)
	w.reserve(len(key) + len(s) + 4*maxVarint + 8)
	end := w.off
	switch v.Type() {
	case attribute.STRING:
		w.putString(s)
		w.putVarint(uint64(len(s)))
		w.putByte(tagAnyString)
	case attribute.BOOL:
		w.putVarint(protowire.EncodeBool(v.AsBool()))
		w.putByte(tagAnyBool)
	case attribute.INT64:
		w.putVarint(uint64(v.AsInt64()))
		w.putByte(tagAnyInt)
	case attribute.FLOAT64:
		w.putFixed64(math.Float64bits(v.AsFloat64()))
		w.putByte(tagAnyDouble)
	}
	w.putVarint(uint64(end - w.off))
	w.putByte(tagKeyValueValue)
	if key != "" {
		w.putString(key)
		w.putVarint(uint64(len(key)))
		w.putByte(tagKeyValueKey)
	}
	w.putVarint(uint64(end - w.off))
	w.tag(num, protowire.BytesType)
}

// anyValue writes v as an AnyValue field numbered num, mapping every
// attribute.Type as otlptracehttp's tracetransform.Value does: slices become
// an ArrayValue, MAP a KeyValueList, EMPTY an AnyValue with no value, and
// an unknown type the string "INVALID". Oneof members are written even at
// their zero value.
func (e *encoder) anyValue(num protowire.Number, v *attribute.Value) {
	w := &e.buf
	mark := w.len()
	switch v.Type() {
	case attribute.BOOL:
		w.varintAlways(anyBool, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		w.varintAlways(anyInt, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		w.fixed64Always(anyDouble, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		w.stringAlways(anyString, v.AsString())
	case attribute.BYTESLICE:
		w.bytesAlways(anyBytes, v.AsByteSlice())
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		for i := len(s) - 1; i >= 0; i-- {
			m := w.len()
			w.varintAlways(anyBool, protowire.EncodeBool(s[i]))
			w.lenTag(arrayValues, m)
		}
		w.lenTag(anyArray, mark)
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		for i := len(s) - 1; i >= 0; i-- {
			m := w.len()
			w.varintAlways(anyInt, uint64(s[i]))
			w.lenTag(arrayValues, m)
		}
		w.lenTag(anyArray, mark)
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		for i := len(s) - 1; i >= 0; i-- {
			m := w.len()
			w.fixed64Always(anyDouble, math.Float64bits(s[i]))
			w.lenTag(arrayValues, m)
		}
		w.lenTag(anyArray, mark)
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		for i := len(s) - 1; i >= 0; i-- {
			m := w.len()
			w.stringAlways(anyString, s[i])
			w.lenTag(arrayValues, m)
		}
		w.lenTag(anyArray, mark)
	case attribute.SLICE:
		s := v.AsSlice()
		for i := len(s) - 1; i >= 0; i-- {
			e.anyValue(arrayValues, &s[i])
		}
		w.lenTag(anyArray, mark)
	case attribute.MAP:
		kvs := v.AsMap()
		for i := len(kvs) - 1; i >= 0; i-- {
			e.keyValue(kvlistValues, &kvs[i])
		}
		w.lenTag(anyKvlist, mark)
	case attribute.EMPTY:
	default:
		w.stringAlways(anyString, "INVALID")
	}
	w.lenTag(num, mark)
}

// flags returns Span.flags or Link.flags: the W3C trace flags, and the bits
// saying that whether the parent (or linked) context is remote is known,
// and whether it is.
func flags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | flagContextHasIsRemote
	if remote {
		f |= flagContextIsRemote
	}
	return f
}

func statusCodeOf(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return statusCodeOK
	case codes.Error:
		return statusCodeError
	default:
		return 0 // STATUS_CODE_UNSET
	}
}

func spanKindOf(k trace.SpanKind) uint64 {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient,
		trace.SpanKindProducer, trace.SpanKindConsumer:
		return uint64(k) // the API's values are the proto's SPAN_KIND_* numbers
	default:
		return 0 // SPAN_KIND_UNSPECIFIED
	}
}

func unixNano(t time.Time) uint64 {
	return uint64(max(0, t.UnixNano()))
}

func clampUint32(v int) uint64 {
	return uint64(min(max(v, 0), math.MaxUint32))
}
