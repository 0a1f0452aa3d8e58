package spans_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/ops/spans"
)

func TestWriteWaterfall(t *testing.T) {
	ms := int64(time.Millisecond)
	trace := []spans.Span{
		{TraceID: "t1", SpanID: "c", ParentSpanID: "a", Name: "process t", StartTimeUnixNano: 6 * ms, EndTimeUnixNano: 10 * ms, Service: "w"},
		{TraceID: "t1", SpanID: "b", ParentSpanID: "a", Name: "wait t", StartTimeUnixNano: 1 * ms, EndTimeUnixNano: 6 * ms},
		{TraceID: "t1", SpanID: "a", Name: "send t", StartTimeUnixNano: 0, EndTimeUnixNano: 1 * ms, Service: "p"},
		{TraceID: "t1", SpanID: "d", ParentSpanID: "elsewhere", Name: "process r", StartTimeUnixNano: 10 * ms, EndTimeUnixNano: 10 * ms},
	}
	var out bytes.Buffer
	if err := spans.WriteWaterfall(&out, trace, 10); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 || lines[0] != "trace t1  4 spans  10.00 ms" {
		t.Fatalf("waterfall:\n%s", out.String())
	}
	wantPrefix := []string{"send t", "  wait t", "  process t", "process r"}
	wantBar := []string{"█         ", " ░░░░░    ", "      ████", "         █"}
	for i, l := range lines[1:] {
		if !strings.HasPrefix(l, wantPrefix[i]) || !strings.Contains(l, " "+wantBar[i]+" ") {
			t.Errorf("line %d %q, want %q with bar %q", i+1, l, wantPrefix[i], wantBar[i])
		}
	}
	if err := spans.WriteWaterfall(&out, nil, 10); err == nil {
		t.Fatal("no spans accepted")
	}
}

// TestTree checks the order a waterfall draws: children by start, the
// longer first on a tie; a span of another process's parent, a span that is
// its own parent and spans in a cycle of parents are roots, each drawn once.
func TestTree(t *testing.T) {
	in := []spans.Span{
		{SpanID: "c2", ParentSpanID: "r", Name: "short", StartTimeUnixNano: 5, EndTimeUnixNano: 6},
		{SpanID: "c1", ParentSpanID: "r", Name: "long", StartTimeUnixNano: 5, EndTimeUnixNano: 9},
		{SpanID: "g", ParentSpanID: "c1", Name: "grandchild", StartTimeUnixNano: 6, EndTimeUnixNano: 7},
		{SpanID: "r", Name: "root", StartTimeUnixNano: 1, EndTimeUnixNano: 10},
		{SpanID: "o", ParentSpanID: "elsewhere", Name: "orphan", StartTimeUnixNano: 2, EndTimeUnixNano: 3},
		{SpanID: "s", ParentSpanID: "s", Name: "self", StartTimeUnixNano: 3, EndTimeUnixNano: 4},
		{SpanID: "x", ParentSpanID: "y", Name: "cycle x", StartTimeUnixNano: 20, EndTimeUnixNano: 21},
		{SpanID: "y", ParentSpanID: "x", Name: "cycle y", StartTimeUnixNano: 22, EndTimeUnixNano: 23},
	}
	var got []string
	for _, n := range spans.Tree(in) {
		got = append(got, strings.Repeat(" ", n.Depth)+n.Span.Name)
	}
	want := []string{"root", " long", "  grandchild", " short", "orphan", "self", "cycle x", " cycle y"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("tree %q, want %q", got, want)
	}
}
