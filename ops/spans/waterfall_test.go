// SPDX-License-Identifier: Apache-2.0

package spans_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

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
	if err := spans.WriteWaterfall(t.Context(), &out, trace, 10); err != nil {
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
	if err := spans.WriteWaterfall(t.Context(), &out, nil, 10); err == nil {
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

// hostileTrace is a trace as anyone who can write spans (or a Jaeger
// backend) could make it: escape sequences and a bidirectional override in
// names and services, a self-parented span, a 2-cycle of parents, a span
// ending before it starts and timestamps at the ends of int64.
func hostileTrace() []spans.Span {
	return []spans.Span{
		{TraceID: "t\x1b[2J", SpanID: "r", Name: "root\x1b[31mRED\x1b]0;pwned\x07", Service: "svc\x1b[2J\u202e", StartTimeUnixNano: 0, EndTimeUnixNano: 1000},
		{TraceID: "t", SpanID: "s", ParentSpanID: "s", Name: "self\r\u2066", StartTimeUnixNano: 10, EndTimeUnixNano: 20},
		{TraceID: "t", SpanID: "x", ParentSpanID: "y", Name: "cycle x", StartTimeUnixNano: 10, EndTimeUnixNano: 20},
		{TraceID: "t", SpanID: "y", ParentSpanID: "x", Name: "cycle y", StartTimeUnixNano: 10, EndTimeUnixNano: 20},
		{TraceID: "t", SpanID: "n", ParentSpanID: "r", Name: "backwards", StartTimeUnixNano: 5000, EndTimeUnixNano: -5000},
		{TraceID: "t", SpanID: "e", Name: "extremes", StartTimeUnixNano: -9e18, EndTimeUnixNano: 9e18},
		{TraceID: "t", SpanID: "f", Name: "reversed extremes", StartTimeUnixNano: 9e18, EndTimeUnixNano: -9e18},
	}
}

// terminalUnsafe returns the first control or format character of s other
// than the newlines ending lines.
func terminalUnsafe(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)) {
			return r, true
		}
	}
	return 0, false
}

// TestWaterfallHostileTrace: a hostile trace is drawn once per span, every
// control or format character escaped, without a panic.
func TestWaterfallHostileTrace(t *testing.T) {
	var out bytes.Buffer
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return spans.WriteWaterfall(t.Context(), &out, hostileTrace(), 20)
	}()
	if err != nil {
		t.Fatal(err)
	}
	if r, bad := terminalUnsafe(out.String()); bad {
		t.Errorf("the waterfall prints %U raw:\n%+q", r, out.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+len(hostileTrace()) {
		t.Fatalf("%d lines for %d spans:\n%s", len(lines), len(hostileTrace()), out.String())
	}
	for _, want := range []string{`root\x1b[31mRED\x1b]0;pwned\a`, `svc\x1b[2J\u202e`, `self\r\u2066`, `t\x1b[2J`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("waterfall lacks the escaped %s:\n%s", want, out.String())
		}
	}
}

// TestWaterfallBounded: a deep chain of spans is drawn with bounded
// indentation, a huge trace up to MaxWaterfallSpans lines, and a done
// context stops the drawing.
func TestWaterfallBounded(t *testing.T) {
	var chain []spans.Span
	for i := range spans.MaxWaterfallSpans + 500 {
		s := spans.Span{TraceID: "t", SpanID: fmt.Sprint(i), Name: "s", StartTimeUnixNano: int64(i), EndTimeUnixNano: int64(i + 1)}
		if i > 0 {
			s.ParentSpanID = fmt.Sprint(i - 1)
		}
		chain = append(chain, s)
	}
	var out bytes.Buffer
	if err := spans.WriteWaterfall(t.Context(), &out, chain, 20); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != spans.MaxWaterfallSpans+2 || !strings.Contains(lines[len(lines)-1], "500 more spans not drawn") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	for _, l := range lines {
		if len(l) > 400 {
			t.Fatalf("a line of %d bytes: %.80q…", len(l), l)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := spans.WriteWaterfall(ctx, &out, chain, 20); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context: %v", err)
	}
}
