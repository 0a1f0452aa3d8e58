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
	"time"
)

// Jaeger is the client of Jaeger's api_v3 query API (HTTP, the one Jaeger
// documents as stable; the /api/traces JSON it replaced is the UI's
// internal one): a Source of traces. api_v3 answers OTLP JSON wrapped in
// {"result": {...}}, so spans keep their kind, parent, links, status and
// events as the SDK recorded them.
type Jaeger struct {
	// URL is the API's base URL, e.g. http://127.0.0.1:16686.
	URL string
	// Client sends the queries; nil is http.DefaultClient.
	Client *http.Client
}

// jaegerSearchWindow is how far back ServiceTraces looks: api_v3 requires
// a time range, and Jaeger's UI API searched the last two days by default.
const jaegerSearchWindow = 48 * time.Hour

// Trace fetches one trace (GET /api/v3/traces/{trace_id}) and converts it.
// A trace Jaeger does not know yet returns no spans and no error.
func (j Jaeger) Trace(ctx context.Context, traceID string) ([]Span, error) {
	return j.fetch(ctx, "/api/v3/traces/"+url.PathEscape(traceID))
}

// ServiceTraces fetches up to limit traces of a service that started in
// the last two days (GET /api/v3/traces?query.service_name=...).
func (j Jaeger) ServiceTraces(ctx context.Context, service string, limit int) ([]Span, error) {
	now := time.Now().UTC()
	q := url.Values{
		"query.service_name":   {service},
		"query.num_traces":     {strconv.Itoa(limit)},
		"query.start_time_min": {now.Add(-jaegerSearchWindow).Format(time.RFC3339Nano)},
		"query.start_time_max": {now.Add(time.Minute).Format(time.RFC3339Nano)},
	}
	return j.fetch(ctx, "/api/v3/traces?"+q.Encode())
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
	var jr jaegerV3Response
	decodeErr := json.NewDecoder(resp.Body).Decode(&jr)
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil // a trace not there (yet), or a search that found none
	}
	if resp.StatusCode != http.StatusOK {
		if decodeErr == nil && jr.Error.Message != "" {
			return nil, fmt.Errorf("jaeger %s: %s: %s", u, resp.Status, jr.Error.Message)
		}
		return nil, fmt.Errorf("jaeger %s: %s", u, resp.Status)
	}
	if decodeErr != nil {
		return nil, fmt.Errorf("jaeger %s: %w", u, decodeErr)
	}
	return fromOTLPJSON(jr.Result.ResourceSpans)
}
