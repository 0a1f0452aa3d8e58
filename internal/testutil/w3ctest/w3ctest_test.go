// SPDX-License-Identifier: Apache-2.0

package w3ctest

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestData: the traceparent is valid and sampled, the members are a valid
// tracestate of the asked width.
func TestData(t *testing.T) {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{
		"traceparent": Traceparent,
		"tracestate":  strings.Join(Members(3, 5, 10), ","),
	})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() || sc.TraceState().Len() != 3 || sc.TraceState().Get("k6") != "vvvvvvv" {
		t.Fatalf("span context %v, state %q", sc, sc.TraceState())
	}
}
