// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"testing"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// TestNilOptionIsIgnored: a nil Option or ProducerOption is skipped
// (docs/ARCHITECTURE.md, "Options"), the others apply.
func TestNilOptionIsIgnored(t *testing.T) {
	if c := newConfig([]Option{nil, WithServiceName("svc"), nil}); c.serviceName != "svc" {
		t.Errorf("service name %q, want svc", c.serviceName)
	}
	if p := NewMetricsProducer(kafkatrace.NewMetrics(nil), nil, WithExplicitPathwayBuckets()); !p.explicit {
		t.Error("the option after a nil one was not applied")
	}
}
