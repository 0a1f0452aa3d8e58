// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/ops/conformance"
	"github.com/kretrieve/kretrieve/ops/conformance/conformancetest"
	"github.com/kretrieve/kretrieve/ops/spans"
)

// TestTracesConform runs the trace contract of the container tier
// (integration.TestFullStack) on the in-process tier: searches through the
// gateway, with the workers on kfake, and every trace as the SDK recorded it.
func TestTracesConform(t *testing.T) {
	h := newHarness(t, 3)
	h.startWorkers()
	srv, _ := h.gateway(gateway.Config{})
	// server, send+wait+process per hop, search, load documents, dedupe, rerank
	const spansPerRequest = 1 + 3*3 + 4
	queries := []string{"parse a URL query string", "compress data with gzip", "encode json", "sort a slice", "regular expression"}
	conformancetest.TestTraces(t, conformancetest.Tier{
		Shape: conformance.Shape{
			Root: "POST /v1/search", RootKind: "server",
			Hops:  conformance.Hops(h.cfg.Topology(), nil, ""),
			Spans: spansPerRequest,
		},
		Search: func(t *testing.T, i int) string {
			res := post(t, srv.URL+"/v1/search", "application/json", fmt.Sprintf(`{"query":%q,"top_k":5}`, queries[i%len(queries)]), nil)
			traceID, _ := res.body["trace_id"].(string)
			if res.status != http.StatusOK || len(traceID) != 32 {
				t.Fatalf("search %d: status %d: %s", i, res.status, res.raw)
			}
			return traceID
		},
		Trace: func(t *testing.T, traceID string) []spans.Span {
			var got []spans.Span
			poll.Wait(resultTimeout, func() bool {
				got = got[:0]
				for _, s := range h.spans.Ended() {
					if s.SpanContext().TraceID().String() == traceID {
						got = append(got, spans.FromReadOnly(s))
					}
				}
				return len(got) >= spansPerRequest
			})
			return got
		},
	})
}
