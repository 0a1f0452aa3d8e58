// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// jaegerV3Response is an api_v3 answer: OTLP JSON traces in "result", or
// an "error".
type jaegerV3Response struct {
	Result struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	} `json:"result"`
	Error struct {
		HTTPCode int    `json:"httpCode"`
		Message  string `json:"message"`
	} `json:"error"`
}

// The OTLP JSON encoding of traces (opentelemetry-proto's
// ExportTraceServiceRequest and TracesData): hex trace and span IDs,
// integers that may be strings, enums as numbers.
type (
	otlpResourceSpans struct {
		Resource struct {
			Attributes []otlpKeyValue `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Spans []otlpSpan `json:"spans"`
		} `json:"scopeSpans"`
	}
	otlpSpan struct {
		TraceID      string         `json:"traceId"`
		SpanID       string         `json:"spanId"`
		ParentSpanID string         `json:"parentSpanId"`
		Name         string         `json:"name"`
		Kind         otlpEnum       `json:"kind"`
		Start        otlpInt        `json:"startTimeUnixNano"`
		End          otlpInt        `json:"endTimeUnixNano"`
		Attributes   []otlpKeyValue `json:"attributes"`
		Events       []struct {
			Time       otlpInt        `json:"timeUnixNano"`
			Name       string         `json:"name"`
			Attributes []otlpKeyValue `json:"attributes"`
		} `json:"events"`
		Links []struct {
			TraceID string `json:"traceId"`
			SpanID  string `json:"spanId"`
		} `json:"links"`
		Status struct {
			Code    otlpEnum `json:"code"`
			Message string   `json:"message"`
		} `json:"status"`
	}
	otlpKeyValue struct {
		Key   string       `json:"key"`
		Value otlpAnyValue `json:"value"`
	}
	otlpAnyValue struct {
		StringValue *string  `json:"stringValue"`
		BoolValue   *bool    `json:"boolValue"`
		IntValue    *otlpInt `json:"intValue"`
		DoubleValue *float64 `json:"doubleValue"`
		ArrayValue  *struct {
			Values []otlpAnyValue `json:"values"`
		} `json:"arrayValue"`
	}
)

// otlpInt is an OTLP JSON 64-bit integer: a decimal string, or a number.
type otlpInt int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *otlpInt) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	if err != nil {
		return fmt.Errorf("OTLP JSON integer %s: %w", b, err)
	}
	*n = otlpInt(v)
	return nil
}

// otlpEnum is an OTLP JSON enum: its number, or its proto name as a
// string.
type otlpEnum string

// UnmarshalJSON implements json.Unmarshaler.
func (e *otlpEnum) UnmarshalJSON(b []byte) error {
	*e = otlpEnum(strings.Trim(string(b), `"`))
	return nil
}

// ReadOTLPJSON reads an OTLP/JSON trace export (the body an OTLP/HTTP
// exporter with http/json posts to /v1/traces, or a TracesData file).
func ReadOTLPJSON(r io.Reader) ([]Span, error) {
	var req struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	}
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		return nil, fmt.Errorf("OTLP JSON traces: %w", err)
	}
	return fromOTLPJSON(req.ResourceSpans)
}

// otlpKinds are the span kinds by their OTLP enum number.
var otlpKinds = []string{"internal", "internal", "server", "client", "producer", "consumer"}

// fromOTLPJSON converts OTLP JSON resource spans: the resource's
// service.name becomes Service, the kind and status their names.
func fromOTLPJSON(rss []otlpResourceSpans) ([]Span, error) {
	var out []Span
	for _, rs := range rss {
		service := ""
		for _, kv := range rs.Resource.Attributes {
			if kv.Key == "service.name" && kv.Value.StringValue != nil {
				service = *kv.Value.StringValue
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s, err := fromOTLPSpan(sp)
				if err != nil {
					return nil, err
				}
				s.Service = service
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func fromOTLPSpan(os otlpSpan) (Span, error) {
	s := Span{
		TraceID: os.TraceID, SpanID: os.SpanID, ParentSpanID: os.ParentSpanID, Name: os.Name,
		Kind:              enumName(os.Kind, otlpKinds, "SPAN_KIND_", "internal"),
		StartTimeUnixNano: int64(os.Start), EndTimeUnixNano: int64(os.End),
		StatusCode:    enumName(os.Status.Code, []string{"", "ok", "error"}, "STATUS_CODE_", ""),
		StatusMessage: os.Status.Message,
		Attributes:    attributes(os.Attributes),
	}
	for _, e := range os.Events {
		s.Events = append(s.Events, Event{Name: e.Name, TimeUnixNano: int64(e.Time), Attributes: attributes(e.Attributes)})
	}
	for _, l := range os.Links {
		s.Links = append(s.Links, Link{TraceID: l.TraceID, SpanID: l.SpanID})
	}
	if s.TraceID == "" || s.SpanID == "" {
		return Span{}, fmt.Errorf("OTLP JSON span %q without traceId or spanId", os.Name)
	}
	return s, nil
}

// enumName returns the name of an OTLP enum given as its number (names
// indexed by it) or as its proto name (prefix + upper-case name, as some
// encoders write it); def when it is missing or unknown.
func enumName(v otlpEnum, names []string, prefix, def string) string {
	if i, err := strconv.Atoi(string(v)); err == nil {
		if i >= 0 && int(i) < len(names) && names[i] != "" {
			return names[i]
		}
		return def
	}
	if name := strings.ToLower(strings.TrimPrefix(string(v), prefix)); name != "" && name != "unspecified" && name != "unset" {
		return name
	}
	return def
}

// attributes converts OTLP JSON attributes to typed ones (homogeneous
// arrays as slices; other values as their JSON text).
func attributes(kvs []otlpKeyValue) []Attribute {
	var out []Attribute
	for _, kv := range kvs {
		out = append(out, NewAttribute(kv.Key, anyValue(kv.Value)))
	}
	return out
}

func anyValue(v otlpAnyValue) any {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.BoolValue != nil:
		return *v.BoolValue
	case v.IntValue != nil:
		return int64(*v.IntValue)
	case v.DoubleValue != nil:
		return *v.DoubleValue
	case v.ArrayValue != nil:
		return arrayValue(v.ArrayValue.Values)
	}
	return ""
}

// arrayValue returns a slice of the values' one type, or their text when
// they mix types.
func arrayValue(vs []otlpAnyValue) any {
	var strs []string
	var bools []bool
	var ints []int64
	var floats []float64
	for _, v := range vs {
		switch x := anyValue(v).(type) {
		case string:
			strs = append(strs, x)
		case bool:
			bools = append(bools, x)
		case int64:
			ints = append(ints, x)
		case float64:
			floats = append(floats, x)
		}
	}
	switch len(vs) {
	case len(strs):
		return strs
	case len(bools):
		return bools
	case len(ints):
		return ints
	case len(floats):
		return floats
	}
	return fmt.Sprint(strs, bools, ints, floats)
}
