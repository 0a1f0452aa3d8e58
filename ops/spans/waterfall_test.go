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
