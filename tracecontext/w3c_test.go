// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"testing"

	"go.opentelemetry.io/otel/propagation"
)

func TestW3CFieldsDetection(t *testing.T) {
	for _, tc := range []struct {
		p            propagation.TextMapPropagator
		w3c, baggage bool
	}{
		{propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}), true, true},
		{propagation.TraceContext{}, true, false},
		{propagation.NewCompositeTextMapPropagator(propagation.Baggage{}, propagation.TraceContext{}), true, true},
		{propagation.Baggage{}, false, false},
	} {
		w3c, bg := W3CFields(tc.p.Fields())
		if w3c != tc.w3c || bg != tc.baggage {
			t.Errorf("W3CFields(%v) = %v, %v; want %v, %v", tc.p.Fields(), w3c, bg, tc.w3c, tc.baggage)
		}
	}
}
