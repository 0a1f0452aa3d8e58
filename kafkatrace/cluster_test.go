// SPDX-License-Identifier: Apache-2.0

package kafkatrace

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaClusterIDOnSpansAndMetrics: a Tracer given the cluster id puts
// messaging.kafka.cluster.id on its send, wait and process spans and on
// every messaging series it records (sent, failed, processed), and a Tracer
// without it puts it nowhere; both share one Metrics, as the pipeline's
// clients do, and their series stay apart.
func TestKafkaClusterIDOnSpansAndMetrics(t *testing.T) {
	m := NewMetrics()
	for _, id := range []string{"cluster-A", ""} {
		tr, rec := newTestTracer(t, WithKafkaClusterID(id), WithMetrics(m), WithConsumerGroup("g"), WithClientID("c"))
		r := &kgo.Record{Topic: "t", Value: []byte("v")}
		tr.OnProduceRecordBuffered(r)
		r.Partition, r.Offset = 1, 5
		tr.OnProduceRecordUnbuffered(r, nil)
		failed := &kgo.Record{Topic: "t", Value: []byte("v")}
		tr.OnProduceRecordBuffered(failed)
		tr.OnProduceRecordUnbuffered(failed, errors.New("boom"))

		in := &kgo.Record{Topic: "t", Partition: 1, Offset: 5, Value: []byte("v"), Timestamp: time.Now(), Headers: r.Headers}
		ctx, span, qw := tr.StartProcess(context.Background(), in, 10)
		tr.EndProcess(ctx, in, qw.End, span, nil, "")

		spans := rec.Ended()
		if len(spans) != 4 { // send, failed send, wait, process
			t.Fatalf("cluster %q: %d spans ended, want 4", id, len(spans))
		}
		for _, s := range spans {
			got, has := attrMap(s.Attributes())["messaging.kafka.cluster.id"]
			if has != (id != "") || has && got != id {
				t.Errorf("cluster %q: span %s messaging.kafka.cluster.id = %v (present %v)", id, s.Name(), got, has)
			}
		}
	}
	withID, without := 0, 0
	for _, s := range m.Messaging() {
		v, ok := s.Attrs.Value("messaging.kafka.cluster.id")
		switch {
		case !ok:
			without++
		case v.AsString() == "cluster-A":
			withID++
		default:
			t.Errorf("series %v: cluster id %q", s.Attrs.Encoded(nil), v.AsString())
		}
	}
	// Per Tracer at least sent, failed and processed series (a partition's
	// state makes its send and process series at once), the same ones.
	if withID < 3 || withID != without {
		t.Errorf("%d series with the cluster id and %d without, want the same number, at least 3", withID, without)
	}
}
