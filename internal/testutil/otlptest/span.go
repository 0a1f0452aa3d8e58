// SPDX-License-Identifier: Apache-2.0

package otlptest

import (
	"encoding/hex"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span is one exported span, flattened out of its resource and scope.
type Span struct {
	// TraceID is the trace id in lowercase hex.
	TraceID string
	// SpanID is the span id in lowercase hex.
	SpanID string
	// ParentSpanID is the parent span id in lowercase hex, "" for a root span.
	ParentSpanID string
	// Name is the span name.
	Name string
	// Kind is "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER" or
	// "UNSPECIFIED".
	Kind string
	// Start and End are the span's start and end times.
	Start, End time.Time
	// Attributes holds the span attributes. Values are string, int64,
	// float64, bool, []byte, []any (arrays) or map[string]any (key-value
	// lists).
	Attributes map[string]any
	// Links are the span links, in order.
	Links []Link
	// Events are the names of the span events, in order.
	Events []string
	// StatusCode is "UNSET", "OK" or "ERROR".
	StatusCode string
	// StatusMessage is the status description, usually set with ERROR.
	StatusMessage string
	// ServiceName is the service.name attribute of the span's resource.
	ServiceName string
	// ResourceAttributes holds all attributes of the span's resource.
	ResourceAttributes map[string]any
	// ScopeName is the instrumentation scope (tracer) name.
	ScopeName string
}

// Link is a link from a [Span] to another span.
type Link struct {
	// TraceID is the linked trace id in lowercase hex.
	TraceID string
	// SpanID is the linked span id in lowercase hex.
	SpanID string
	// Attributes holds the link attributes, typed as in [Span.Attributes].
	Attributes map[string]any
}

// flatten converts the resource spans of one export request into Spans.
func flatten(rss []*tracepb.ResourceSpans) []Span {
	var out []Span
	for _, rs := range rss {
		resAttrs := attrMap(rs.GetResource().GetAttributes())
		service, _ := resAttrs["service.name"].(string)
		for _, ss := range rs.GetScopeSpans() {
			scope := ss.GetScope().GetName()
			for _, s := range ss.GetSpans() {
				out = append(out, convertSpan(s, service, scope, resAttrs))
			}
		}
	}
	return out
}

func convertSpan(s *tracepb.Span, service, scope string, resAttrs map[string]any) Span {
	sp := Span{
		TraceID:            hex.EncodeToString(s.GetTraceId()),
		SpanID:             hex.EncodeToString(s.GetSpanId()),
		ParentSpanID:       hex.EncodeToString(s.GetParentSpanId()),
		Name:               s.GetName(),
		Kind:               strings.TrimPrefix(s.GetKind().String(), "SPAN_KIND_"),
		Start:              time.Unix(0, int64(s.GetStartTimeUnixNano())), //nolint:gosec // OTLP nanos fit in int64 until 2262.
		End:                time.Unix(0, int64(s.GetEndTimeUnixNano())),   //nolint:gosec // as above.
		Attributes:         attrMap(s.GetAttributes()),
		StatusCode:         strings.TrimPrefix(s.GetStatus().GetCode().String(), "STATUS_CODE_"),
		StatusMessage:      s.GetStatus().GetMessage(),
		ServiceName:        service,
		ResourceAttributes: resAttrs,
		ScopeName:          scope,
	}
	for _, l := range s.GetLinks() {
		sp.Links = append(sp.Links, Link{
			TraceID:    hex.EncodeToString(l.GetTraceId()),
			SpanID:     hex.EncodeToString(l.GetSpanId()),
			Attributes: attrMap(l.GetAttributes()),
		})
	}
	for _, e := range s.GetEvents() {
		sp.Events = append(sp.Events, e.GetName())
	}
	return sp
}

// attrMap converts OTLP key-values to a map; it never returns nil.
func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = anyValue(kv.GetValue())
	}
	return m
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		vals := x.ArrayValue.GetValues()
		out := make([]any, 0, len(vals))
		for _, e := range vals {
			out = append(out, anyValue(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return attrMap(x.KvlistValue.GetValues())
	default:
		return nil
	}
}
