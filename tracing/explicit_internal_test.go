// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// explicitPoint counts zeros, positive and negative exponential buckets in
// the explicit buckets holding them, at any scale.
func TestExplicitPoint(t *testing.T) {
	dp := metricdata.ExponentialHistogramDataPoint[float64]{
		Count: 7, Sum: 3, Scale: 0, ZeroCount: 1,
		// Scale 0: bucket i is (2^i, 2^(i+1)]; middles 0.71, 1.41, 2.83, 5.66.
		PositiveBucket: metricdata.ExponentialBucket{Offset: -1, Counts: []uint64{1, 2, 0, 1}},
		NegativeBucket: metricdata.ExponentialBucket{Offset: 0, Counts: []uint64{2}}, // middle -1.41
	}
	got := explicitPoint(dp, []float64{-1, 0, 1, 2, 4})
	want := []uint64{2, 1, 1, 2, 0, 1}
	if got.Count != 7 || got.Sum != 3 {
		t.Errorf("count %d sum %g", got.Count, got.Sum)
	}
	for i := range want {
		if got.BucketCounts[i] != want[i] {
			t.Fatalf("bucket counts %v, want %v", got.BucketCounts, want)
		}
	}
}
