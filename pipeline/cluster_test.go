// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// TestKafkaClusterIDFromTheBroker: the start-up check (kafkaclient.WaitCluster)
// learns the cluster id from the broker's Metadata response, the same id an
// independent admin client reads; a pipeline given it puts it, as
// messaging.kafka.cluster.id, on every send, wait and process span of a
// request and on every messaging metric series.
func TestKafkaClusterIDFromTheBroker(t *testing.T) {
	h := newHarness(t, 3)
	id, err := kafkaclient.WaitCluster(t.Context(), h.cfg.Kafka, nil, kafkaclient.OneShot())
	if err != nil {
		t.Fatal(err)
	}
	adm, err := kgo.NewClient(kgo.SeedBrokers(h.cfg.Kafka.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	meta, err := kadm.NewClient(adm).Metadata(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// kfake reports "kfake" unless told otherwise.
	if id == "" || id != meta.Cluster || id != "kfake" {
		t.Fatalf("WaitCluster learned cluster id %q; the broker's metadata says %q", id, meta.Cluster)
	}
	h.clusterID = id
	h.startWorkers()
	sendAndWait(t, h.client(true), []string{"compress data with gzip"})

	// The last process span ends after the call has its outcome.
	kafkaSpans := func() (n int) {
		for _, s := range h.recorded() {
			if _, messaging := s.Attrs["messaging.destination.name"]; messaging {
				n++
			}
		}
		return n
	}
	eventually(t, func() bool { return kafkaSpans() >= 9 }, "send, wait and process spans of three topics: %d Kafka spans", kafkaSpans())
	for _, s := range h.recorded() {
		if _, messaging := s.Attrs["messaging.destination.name"]; !messaging {
			continue
		}
		if got := s.Attrs["messaging.kafka.cluster.id"]; got != id {
			t.Errorf("span %s: messaging.kafka.cluster.id = %v, want %q", s.Name, got, id)
		}
	}
	assertMetricsCarryCluster(t, h, id)
}

// messagingMetrics are the metrics of kafkatrace.Metrics that carry the
// cluster id.
var messagingMetrics = []string{"messaging.client.sent.messages", "messaging.client.operation.duration",
	"messaging.client.consumed.messages", "messaging.process.duration", "kretrieve.messaging.queue_wait.duration"}

// assertMetricsCarryCluster checks that every point of the messaging
// metrics h's reader collects carries messaging.kafka.cluster.id = id.
func assertMetricsCarryCluster(t *testing.T, h *harness, id string) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	check := func(metric string, attrs attribute.Set) {
		if !slices.Contains(messagingMetrics, metric) {
			return // kotel's broker connection metrics, the pathways: not per Kafka client
		}
		seen[metric]++
		if v, _ := attrs.Value("messaging.kafka.cluster.id"); v.AsString() != id {
			t.Errorf("%s point %v: messaging.kafka.cluster.id = %q, want %q", metric, attrs.Encoded(nil), v.AsString(), id)
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					check(m.Name, dp.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					check(m.Name, dp.Attributes)
				}
			}
		}
	}
	for _, name := range messagingMetrics {
		if seen[name] == 0 {
			t.Errorf("no %s points (collected: %v)", name, seen)
		}
	}
}
