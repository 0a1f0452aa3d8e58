// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/tracing"
)

// Options' meter records kotel's broker connection metrics only: produced
// and fetched records are counted by kafkatrace (messaging.client.sent.
// messages, messaging.client.consumed.messages), not a second time under
// kotel's messaging.kafka.{produce,fetch}_* names.
func TestOptionsMeterCountsNoRecords(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })

	cfg := kafkaclient.Config{Brokers: []string{b.Addr()}}
	opts := append(kafkaclient.Options(cfg, nil, mp),
		kgo.ConsumeTopics("meter-test"), kgo.AllowAutoTopicCreation())
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "meter-test", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if fs := cl.PollRecords(t.Context(), 1); fs.NumRecords() != 1 {
		t.Fatalf("consumed %d records, errors %v", fs.NumRecords(), fs.Errors())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
			if strings.Contains(m.Name, "bytes") && m.Unit != "By" {
				t.Errorf("%s has unit %q, want UCUM's By", m.Name, m.Unit)
			}
		}
	}
	for _, want := range []string{"messaging.kafka.connects.count", "messaging.kafka.write_bytes", "messaging.kafka.read_bytes.count"} {
		if !slices.Contains(names, want) {
			t.Errorf("missing broker metric %s (got %v)", want, names)
		}
	}
	for _, dup := range []string{
		"messaging.kafka.produce_records.count", "messaging.kafka.fetch_records.count",
		"messaging.kafka.produce_bytes.count", "messaging.kafka.fetch_bytes.count",
	} {
		if slices.Contains(names, dup) {
			t.Errorf("%s counts records a second time (got %v)", dup, names)
		}
	}
}

// kotel's byte counters reach a Prometheus scrape of tracing's /metrics
// as _bytes_total series (UCUM's By), not kotel's _by_total.
func TestBrokerMeterBytesOnPrometheus(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	p, err := tracing.Setup(t.Context(), tracing.WithPrometheusListen("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	cl, err := kgo.NewClient(kafkaclient.Options(kafkaclient.Config{Brokers: []string{b.Addr()}}, nil, p.MeterProvider)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+p.PrometheusAddr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nmessaging_kafka_write_bytes_total{", "\nmessaging_kafka_read_bytes_count_total{"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s series in the scrape", strings.TrimSpace(want))
		}
	}
	if strings.Contains(string(body), "_by_total") {
		t.Errorf("a byte counter still ends in _by_total:\n%s", body)
	}
}
