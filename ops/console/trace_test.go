// SPDX-License-Identifier: Apache-2.0

package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/console"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/topology"
)

// TestTraceTreeOrder: GET /api/traces/{id} answers a trace's spans in the
// order the waterfall draws them, spans.Tree's, each with its depth, so the
// browser draws them as they come: a child that starts before its sibling
// comes first however the spans were recorded, the longer first of two
// starting together, an orphan and a self-parented span as roots, and spans
// caught in a cycle of parents once each, after the roots.
func TestTraceTreeOrder(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const t0 = int64(1_700_000_000_000_000_000)
	sp := func(id, parent string, startUS, durUS int64) spans.Span {
		return spans.Span{TraceID: traceID, SpanID: id, ParentSpanID: parent, Name: "op " + id, Kind: "internal",
			StartTimeUnixNano: t0 + startUS*1e3, EndTimeUnixNano: t0 + (startUS+durUS)*1e3}
	}
	recorded := []spans.Span{ // as they ended, not as they are drawn
		sp("b", "r", 10, 20),
		sp("g", "b", 12, 5),
		sp("c1", "r", 50, 5),
		sp("s", "s", 3, 4), // its own parent
		sp("x", "y", 60, 5),
		sp("a", "r", 5, 10), // starts before its sibling b
		sp("y", "x", 70, 5), // x and y are each other's parent
		sp("c2", "r", 50, 30),
		sp("r", "", 0, 100),
		sp("o", "0123456789abcdef", 1, 2), // its parent is elsewhere
	}
	con, err := console.New(console.Config{
		Topology:     topology.Default(messages.DefaultTopics()),
		KafkaOptions: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, // never dialled: the trace API reads no topic
	}, console.WithTraces(func() []spans.Trace { return []spans.Trace{{TraceID: traceID, Spans: recorded}} }))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(con)
	t.Cleanup(func() { con.Close(); srv.Close() })

	code, _, b := call(t, "GET", srv.URL+"/console/api/traces/"+traceID, "")
	if code != http.StatusOK {
		t.Fatalf("trace: %d %s", code, b)
	}
	tr := decode[struct {
		Spans []struct {
			SpanID  string `json:"span_id"`
			StartUS int64  `json:"start_us"`
			Depth   *int   `json:"depth"`
		}
	}](t, b)
	want := []string{"r:0", "a:1", "b:1", "g:2", "c2:1", "c1:1", "o:0", "s:0", "x:0", "y:1"}
	var got []string
	for _, s := range tr.Spans {
		if s.Depth == nil {
			t.Fatalf("span %s has no depth: %s", s.SpanID, b)
		}
		got = append(got, fmt.Sprintf("%s:%d", s.SpanID, *s.Depth))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("spans (id:depth) = %v, want %v", got, want)
	}
	// The same order and depths as the terminal waterfall's.
	var tree []string
	for _, nd := range spans.Tree(recorded) {
		tree = append(tree, fmt.Sprintf("%s:%d", nd.Span.SpanID, nd.Depth))
	}
	if fmt.Sprint(got) != fmt.Sprint(tree) {
		t.Errorf("spans (id:depth) = %v, spans.Tree = %v", got, tree)
	}
	if len(tr.Spans) > 1 && (tr.Spans[0].StartUS != 0 || tr.Spans[1].StartUS != 5) {
		t.Errorf("start_us of r, a = %d, %d; want 0, 5 (relative to the first span)", tr.Spans[0].StartUS, tr.Spans[1].StartUS)
	}
}
