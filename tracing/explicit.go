// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"math"
	"sort"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// explicitPoint returns dp's measurements as an explicit-bucket histogram
// point with bounds (ascending): each exponential bucket is counted in the
// explicit bucket holding its geometric middle, zeros in the bucket
// holding 0. At the pathway histograms' scale an exponential bucket is
// 4.4% wide, so a measurement is misplaced only when it lies within 2.2%
// of an explicit bound. Count, sum, extrema and exemplars are kept.
func explicitPoint(dp metricdata.ExponentialHistogramDataPoint[float64], bounds []float64) metricdata.HistogramDataPoint[float64] {
	out := metricdata.HistogramDataPoint[float64]{
		Attributes: dp.Attributes, StartTime: dp.StartTime, Time: dp.Time, Count: dp.Count, Sum: dp.Sum,
		Min: dp.Min, Max: dp.Max, Exemplars: dp.Exemplars,
		Bounds: bounds, BucketCounts: make([]uint64, len(bounds)+1),
	}
	out.BucketCounts[sort.SearchFloat64s(bounds, 0)] += dp.ZeroCount
	width := math.Exp2(-float64(dp.Scale)) // of a bucket, in powers of two
	add := func(b metricdata.ExponentialBucket, sign float64) {
		for i, c := range b.Counts {
			if c == 0 {
				continue
			}
			mid := sign * math.Exp2((float64(b.Offset)+float64(i)+0.5)*width)
			out.BucketCounts[sort.SearchFloat64s(bounds, mid)] += c
		}
	}
	add(dp.PositiveBucket, 1)
	add(dp.NegativeBucket, -1)
	return out
}

// explicitProducer is a Producer whose base-2 exponential histograms are
// explicit-bucket ones with bounds: what the Prometheus endpoint serves, so
// that a scrape in the text formats sees buckets (the exporter turns an
// exponential histogram into a native one, which those formats show as its
// +Inf bucket alone).
type explicitProducer struct {
	sdkmetric.Producer
	bounds []float64
}

// Produce returns the wrapped producer's metrics with exponential
// histograms converted by [explicitPoint].
func (p explicitProducer) Produce(ctx context.Context) ([]metricdata.ScopeMetrics, error) {
	sms, err := p.Producer.Produce(ctx)
	out := make([]metricdata.ScopeMetrics, len(sms))
	for i, sm := range sms {
		out[i] = metricdata.ScopeMetrics{Scope: sm.Scope, Metrics: make([]metricdata.Metrics, len(sm.Metrics))}
		for j, m := range sm.Metrics {
			if eh, ok := m.Data.(metricdata.ExponentialHistogram[float64]); ok {
				h := metricdata.Histogram[float64]{Temporality: eh.Temporality, DataPoints: make([]metricdata.HistogramDataPoint[float64], len(eh.DataPoints))}
				for k, dp := range eh.DataPoints {
					h.DataPoints[k] = explicitPoint(dp, p.bounds)
				}
				m.Data = h
			}
			out[i].Metrics[j] = m
		}
	}
	return out, err
}
