// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// jaegerResponse is the shape of Jaeger's HTTP query API (/api/traces...).
type jaegerResponse struct {
	Data []jaegerTrace `json:"data"`
}

type jaegerTrace struct {
	TraceID   string                   `json:"traceID"`
	Spans     []jaegerSpan             `json:"spans"`
	Processes map[string]jaegerProcess `json:"processes"`
}

type jaegerSpan struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []jaegerRef `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []jaegerTag `json:"tags"`
	ProcessID     string      `json:"processID"`
}

type jaegerRef struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jaegerProcess struct {
	ServiceName string `json:"serviceName"`
}

// Jaeger is the client of a Jaeger query API: a Source of traces.
type Jaeger struct {
	// URL is the API's base URL, e.g. http://127.0.0.1:16686.
	URL string
	// Client sends the queries; nil is http.DefaultClient.
	Client *http.Client
}

// Trace fetches one trace and converts it. A trace Jaeger does not know yet
// returns no spans and no error.
func (j Jaeger) Trace(ctx context.Context, traceID string) ([]Span, error) {
	return j.fetch(ctx, "/api/traces/"+url.PathEscape(traceID))
}

// ServiceTraces fetches up to limit recent traces of a service.
func (j Jaeger) ServiceTraces(ctx context.Context, service string, limit int) ([]Span, error) {
	q := url.Values{"service": {service}, "limit": {strconv.Itoa(limit)}}
	return j.fetch(ctx, "/api/traces?"+q.Encode())
}

func (j Jaeger) fetch(ctx context.Context, path string) ([]Span, error) {
	u := strings.TrimRight(j.URL, "/") + path
	client := j.Client
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jaeger %s: %s", u, resp.Status)
	}
	var jr jaegerResponse
	if err := json.NewDecoder(resp.Body).Decode(&jr); err != nil {
		return nil, fmt.Errorf("jaeger %s: %w", u, err)
	}
	return fromJaeger(jr.Data), nil
}

// fromJaeger converts Jaeger traces: CHILD_OF references become parents,
// FOLLOWS_FROM references links, the span.kind tag the kind, the other tags
// attributes. Jaeger stores a parent that is also a link as a single
// FOLLOWS_FROM reference; without a CHILD_OF, that reference (same trace) is
// taken as the parent too.
func fromJaeger(traces []jaegerTrace) []Span {
	var out []Span
	for _, t := range traces {
		for _, js := range t.Spans {
			s := Span{
				TraceID: js.TraceID, SpanID: js.SpanID, Name: js.OperationName,
				Kind:              "internal",
				StartTimeUnixNano: js.StartTime * 1000, EndTimeUnixNano: (js.StartTime + js.Duration) * 1000,
				Service: t.Processes[js.ProcessID].ServiceName,
			}
			for _, r := range js.References {
				switch {
				case r.RefType == "CHILD_OF" && s.ParentSpanID == "" && r.TraceID == js.TraceID:
					s.ParentSpanID = r.SpanID
				default:
					s.Links = append(s.Links, Link{TraceID: r.TraceID, SpanID: r.SpanID})
				}
			}
			if s.ParentSpanID == "" {
				// Jaeger folds a parent that is also a link (semconv
				// consumer spans) into one FOLLOWS_FROM reference: it
				// stands for both.
				for _, r := range js.References {
					if r.RefType == "FOLLOWS_FROM" && r.TraceID == js.TraceID {
						s.ParentSpanID = r.SpanID
						break
					}
				}
			}
			for _, tag := range js.Tags {
				if tag.Key == "span.kind" {
					s.Kind, _ = tag.Value.(string)
					continue
				}
				s.Attributes = append(s.Attributes, NewAttribute(tag.Key, tagValue(tag)))
			}
			out = append(out, s)
		}
	}
	return out
}

// tagValue converts a Jaeger tag to the attribute value OTel would have.
func tagValue(t jaegerTag) any {
	switch t.Type {
	case "int64":
		switch v := t.Value.(type) {
		case float64:
			return int64(v)
		case string:
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	case "float64":
		if v, ok := t.Value.(float64); ok {
			return v
		}
	case "bool":
		if v, ok := t.Value.(bool); ok {
			return v
		}
	}
	if v, ok := t.Value.(string); ok {
		return v
	}
	return fmt.Sprint(t.Value)
}
