// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestNewHandlerConfig: WithTracerProvider sets the provider, nil is
// ignored, and the default is the global provider.
func TestNewHandlerConfig(t *testing.T) {
	tp := noop.NewTracerProvider()
	for name, tc := range map[string]struct {
		opts []HandlerOption
		want any
	}{
		"default": {nil, otel.GetTracerProvider()},
		"nil":     {[]HandlerOption{WithTracerProvider(nil)}, otel.GetTracerProvider()},
		"set":     {[]HandlerOption{WithTracerProvider(tp)}, tp},
	} {
		t.Run(name, func(t *testing.T) {
			if got := NewHandlerConfig(tc.opts...).TracerProvider; got != tc.want {
				t.Errorf("TracerProvider = %v, want %v", got, tc.want)
			}
		})
	}
}
