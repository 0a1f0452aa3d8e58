// SPDX-License-Identifier: Apache-2.0

package spans_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/spans"
)

// TestSpansFileGroupsTraces writes two traces, one with its root elsewhere,
// and reads them back grouped, the longest first.
func TestSpansFileGroupsTraces(t *testing.T) {
	in := []spans.Trace{
		{TraceID: "short", Spans: []spans.Span{{TraceID: "short", SpanID: "1", Name: "request", EndTimeUnixNano: 1e6}}},
		{TraceID: "long", Spans: []spans.Span{
			{TraceID: "long", SpanID: "3", ParentSpanID: "2", Name: "search", StartTimeUnixNano: 3e6, EndTimeUnixNano: 4e6},
			{TraceID: "long", SpanID: "2", ParentSpanID: "elsewhere", Name: "process t", StartTimeUnixNano: 2e6, EndTimeUnixNano: 7e6},
		}},
	}
	var file bytes.Buffer
	if err := spans.WriteSpans(&file, in); err != nil {
		t.Fatal(err)
	}
	read, err := spans.ReadSpans(&file)
	if err != nil || len(read) != 3 {
		t.Fatalf("read %d spans (%v)", len(read), err)
	}
	got := spans.GroupTraces(read)
	if len(got) != 2 || got[0].TraceID != "long" || got[0].DurationMS != 5 || got[0].Spans[0].SpanID != "2" || got[1].DurationMS != 1 {
		t.Fatalf("traces %+v", got)
	}
}

func TestReadSpansNamesTheBadLine(t *testing.T) {
	for _, bad := range []string{"{\"trace_id\":\"a\",\"span_id\":\"b\"}\n\nnot json\n", "{\"name\":\"x\"}\n", `{"trace_id":"a","span_id":"b","attributes":[{"key":"k","type":"int64","value":1.5}]}`} {
		if _, err := spans.ReadSpans(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("ReadSpans(%q) = %v, want an error naming the line", bad, err)
		}
	}
}
