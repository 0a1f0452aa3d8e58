// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Span is a finished span, backend-neutral: as this process recorded it
// (FromReadOnly: the Store's spans, a run summary's slowest request), as one
// line of a spans file (WriteSpans), or as fetched from a trace backend
// (Jaeger). Its JSON keys are documented in docs/configuration.md.
type Span struct {
	TraceID      string `json:"trace_id"`
	SpanID       string `json:"span_id"`
	ParentSpanID string `json:"parent_span_id,omitempty"`
	Name         string `json:"name"`
	// Kind is "internal", "server", "client", "producer" or "consumer".
	Kind string `json:"kind"`
	// Service is the service.name of the process that recorded the span.
	Service           string `json:"service,omitempty"`
	StartTimeUnixNano int64  `json:"start_time_unix_nano"`
	EndTimeUnixNano   int64  `json:"end_time_unix_nano"`
	// StatusCode is "error", "ok" or empty (unset).
	StatusCode    string      `json:"status_code,omitempty"`
	StatusMessage string      `json:"status_message,omitempty"`
	Attributes    []Attribute `json:"attributes,omitempty"`
	Events        []Event     `json:"events,omitempty"`
	Links         []Link      `json:"links,omitempty"`
}

// Event is a span event, such as a retry or a recorded error.
type Event struct {
	Name         string      `json:"name"`
	TimeUnixNano int64       `json:"time_unix_nano"`
	Attributes   []Attribute `json:"attributes,omitempty"`
}

// Link is a span's link to another span context.
type Link struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// Attribute is a typed attribute: Type is "string", "bool", "int64",
// "float64" or one of those followed by "[]", and Value holds the matching
// Go type (string, bool, int64, float64 or a slice of one). Typed, so that
// an int64 read back from JSON is an int64 again. Non-finite floats are
// written as the strings "NaN", "+Inf" and "-Inf".
type Attribute struct {
	Key   string
	Type  string
	Value any
}

// Attr returns the value of the span's attribute key, if it has one.
func (s Span) Attr(key string) (any, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value, true
		}
	}
	return nil, false
}

// NewAttribute returns the attribute key with value, typed by value's Go
// type (string, bool, int64, float64 or a slice of one); any other value is
// kept as its fmt.Sprint text.
func NewAttribute(key string, value any) Attribute {
	a, _ := fromKeyValue(Attribute{Key: key, Value: value}.KeyValue())
	return a
}

// Duration returns the span's length in nanoseconds.
func (s Span) Duration() int64 { return s.EndTimeUnixNano - s.StartTimeUnixNano }

// FromReadOnly converts a finished SDK span, as a SpanRecorder or a span
// processor holds it.
func FromReadOnly(ro sdktrace.ReadOnlySpan) Span {
	sc := ro.SpanContext()
	s := Span{
		TraceID:           sc.TraceID().String(),
		SpanID:            sc.SpanID().String(),
		Name:              ro.Name(),
		Kind:              kindName(ro.SpanKind()),
		StartTimeUnixNano: ro.StartTime().UnixNano(),
		EndTimeUnixNano:   ro.EndTime().UnixNano(),
	}
	if p := ro.Parent(); p.IsValid() {
		s.ParentSpanID = p.SpanID().String()
	}
	if res := ro.Resource(); res != nil {
		if v, ok := res.Set().Value(semconv.ServiceNameKey); ok {
			s.Service = v.AsString()
		}
	}
	switch st := ro.Status(); st.Code {
	case codes.Error:
		s.StatusCode, s.StatusMessage = "error", st.Description
	case codes.Ok:
		s.StatusCode = "ok"
	}
	s.Attributes = fromKeyValues(ro.Attributes())
	for _, e := range ro.Events() {
		s.Events = append(s.Events, Event{Name: e.Name, TimeUnixNano: e.Time.UnixNano(), Attributes: fromKeyValues(e.Attributes)})
	}
	for _, l := range ro.Links() {
		s.Links = append(s.Links, Link{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String()})
	}
	return s
}

func kindName(k trace.SpanKind) string {
	switch k {
	case trace.SpanKindServer:
		return "server"
	case trace.SpanKindClient:
		return "client"
	case trace.SpanKindProducer:
		return "producer"
	case trace.SpanKindConsumer:
		return "consumer"
	}
	return "internal"
}

func fromKeyValues(kvs []attribute.KeyValue) []Attribute {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]Attribute, 0, len(kvs))
	for _, kv := range kvs {
		if a, ok := fromKeyValue(kv); ok {
			out = append(out, a)
		}
	}
	return out
}

func fromKeyValue(kv attribute.KeyValue) (Attribute, bool) {
	a := Attribute{Key: string(kv.Key)}
	switch kv.Value.Type() {
	case attribute.STRING:
		a.Type, a.Value = "string", kv.Value.AsString()
	case attribute.BOOL:
		a.Type, a.Value = "bool", kv.Value.AsBool()
	case attribute.INT64:
		a.Type, a.Value = "int64", kv.Value.AsInt64()
	case attribute.FLOAT64:
		a.Type, a.Value = "float64", kv.Value.AsFloat64()
	case attribute.STRINGSLICE:
		a.Type, a.Value = "string[]", kv.Value.AsStringSlice()
	case attribute.BOOLSLICE:
		a.Type, a.Value = "bool[]", kv.Value.AsBoolSlice()
	case attribute.INT64SLICE:
		a.Type, a.Value = "int64[]", kv.Value.AsInt64Slice()
	case attribute.FLOAT64SLICE:
		a.Type, a.Value = "float64[]", kv.Value.AsFloat64Slice()
	case attribute.SLICE, attribute.MAP:
		// Such as gen_ai.retrieval.documents: kept as the JSON text the
		// specification gives complex values outside OTLP (AnyValue
		// representation for non-OTLP protocols).
		a.Type, a.Value = "string", kv.Value.String()
	default:
		return a, false
	}
	return a, true
}

// KeyValue converts a back to an OpenTelemetry attribute.
func (a Attribute) KeyValue() attribute.KeyValue {
	k := attribute.Key(a.Key)
	switch v := a.Value.(type) {
	case string:
		return k.String(v)
	case bool:
		return k.Bool(v)
	case int64:
		return k.Int64(v)
	case float64:
		return k.Float64(v)
	case []string:
		return k.StringSlice(v)
	case []bool:
		return k.BoolSlice(v)
	case []int64:
		return k.Int64Slice(v)
	case []float64:
		return k.Float64Slice(v)
	}
	return k.String(fmt.Sprint(a.Value))
}

type jsonAttribute struct {
	Key   string          `json:"key"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// MarshalJSON writes {"key","type","value"}.
func (a Attribute) MarshalJSON() ([]byte, error) {
	var v any = a.Value
	switch f := a.Value.(type) {
	case float64:
		v = jsonFloat(f)
	case []float64:
		fs := make([]any, len(f))
		for i, x := range f {
			fs[i] = jsonFloat(x)
		}
		v = fs
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("attribute %s: %w", a.Key, err)
	}
	return json.Marshal(jsonAttribute{a.Key, a.Type, b})
}

// jsonFloat is f, or its name when JSON has no number for it.
func jsonFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return f
}

// UnmarshalJSON reads {"key","type","value"}, the value as its type says.
func (a *Attribute) UnmarshalJSON(b []byte) error {
	var ja jsonAttribute
	if err := json.Unmarshal(b, &ja); err != nil {
		return err
	}
	a.Key, a.Type = ja.Key, ja.Type
	var err error
	switch ja.Type {
	case "string":
		a.Value, err = decodeAs[string](ja.Value)
	case "bool":
		a.Value, err = decodeAs[bool](ja.Value)
	case "int64":
		a.Value, err = decodeAs[int64](ja.Value)
	case "float64":
		a.Value, err = decodeFloat(ja.Value)
	case "string[]":
		a.Value, err = decodeAs[[]string](ja.Value)
	case "bool[]":
		a.Value, err = decodeAs[[]bool](ja.Value)
	case "int64[]":
		a.Value, err = decodeAs[[]int64](ja.Value)
	case "float64[]":
		var raws []json.RawMessage
		if err = json.Unmarshal(ja.Value, &raws); err == nil {
			fs := make([]float64, len(raws))
			for i, r := range raws {
				if fs[i], err = decodeFloat(r); err != nil {
					break
				}
			}
			a.Value = fs
		}
	default:
		return fmt.Errorf("attribute %s: unknown type %q", ja.Key, ja.Type)
	}
	if err != nil {
		return fmt.Errorf("attribute %s: %w", ja.Key, err)
	}
	return nil
}

func decodeAs[T any](b json.RawMessage) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

func decodeFloat(b json.RawMessage) (float64, error) {
	if len(b) > 0 && b[0] == '"' {
		s, err := decodeAs[string](b)
		if err != nil {
			return 0, err
		}
		return strconv.ParseFloat(s, 64)
	}
	return decodeAs[float64](b)
}
