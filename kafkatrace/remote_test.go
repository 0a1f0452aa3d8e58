// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"
)

// StartProcessRemote returns the span context of the record's headers on
// every path of StartProcess: sampled, unsampled (the fast path), at a
// trust boundary, and none for a record without one.
func TestStartProcessRemote(t *testing.T) {
	const (
		sampled   = "00-aa000000000000000000000000000000-bb00000000000000-01"
		unsampled = "00-aa000000000000000000000000000000-bb00000000000000-00"
	)
	want := trace.SpanContextConfig{TraceID: trace.TraceID{0xaa}, SpanID: trace.SpanID{0xbb}, Remote: true}
	for _, tt := range []struct {
		name string
		opts []Option
		tp   string
	}{
		{"sampled", nil, sampled},
		{"unsampled, parent-based", []Option{WithParentBasedSampling()}, unsampled},
		{"trust boundary", []Option{WithTrustBoundary()}, sampled},
		{"none", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, _ := newTestTracer(t, tt.opts...)
			r := &kgo.Record{Topic: "retrieval.requests"}
			if tt.tp != "" {
				r.Headers = []kgo.RecordHeader{{Key: "traceparent", Value: []byte(tt.tp)}}
			}
			ctx, span, qw, remote := tr.StartProcessRemote(context.Background(), r, -1)
			tr.EndProcess(ctx, r, qw.End, span, nil, "")
			if tt.tp == "" {
				if remote.IsValid() {
					t.Fatalf("remote %v from a record without trace context", remote)
				}
				return
			}
			w := want
			if tt.tp == sampled {
				w.TraceFlags = trace.FlagsSampled
			}
			if !remote.Equal(trace.NewSpanContext(w)) {
				t.Fatalf("remote = %v, want %v", remote, trace.NewSpanContext(w))
			}
		})
	}
}
