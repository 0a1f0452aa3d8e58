// SPDX-License-Identifier: Apache-2.0

package peers

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"
	"github.com/tinylib/msgp/msgp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/bench/relay"
	"github.com/kretrieve/kretrieve/broker/brokertest"
)

// statsPoint is the part of a Data Streams stats point the test reads
// (dd-trace-go's internal datastreams.StatsPoint, as MessagePack).
type statsPoint struct {
	EdgeTags   []string
	Hash       uint64
	ParentHash uint64
}

// statsPayload is the part of a Data Streams payload the test reads.
type statsPayload struct {
	Service string
	Stats   []struct{ Stats []statsPoint }
}

// decodePayload decodes one body sent to PipelineStatsPath: gzip, then
// MessagePack, read through its JSON form.
func decodePayload(t *testing.T, body []byte) statsPayload {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("pipeline stats payload: %v", err)
	}
	var js bytes.Buffer
	if _, err := msgp.CopyToJSON(&js, zr); err != nil {
		t.Fatalf("pipeline stats payload: %v", err)
	}
	var p statsPayload
	if err := json.Unmarshal(js.Bytes(), &p); err != nil {
		t.Fatalf("pipeline stats payload: %v", err)
	}
	return p
}

// TestDSMCheckpoints relays records with the dsm variant and checks that it
// really checkpoints: every record of topic B reaches the consumer with a
// pathway header, and the payloads the tracer sends its agent hold the
// relay's four checkpoints (producer out to A, worker in from A and out to
// B, consumer in from B), each the parent of the next.
func TestDSMCheckpoints(t *testing.T) {
	const n = 50
	sink := NewAgentSink(t, true)
	StartTracer(t, sink.URL)
	r := relay.New(t, brokertest.NewBroker(t, relay.Partitions).Addr(), DSM(), n)
	var mu sync.Mutex
	withHeader := 0
	r.Observe = func(rec *kgo.Record, _ time.Time) {
		for _, h := range rec.Headers {
			if h.Key == PathwayHeader && len(h.Value) > 0 {
				mu.Lock()
				withHeader++
				mu.Unlock()
				return
			}
		}
	}
	if err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.Close()
	mu.Lock()
	if withHeader != n {
		t.Errorf("%d records of %s with a %s header, want %d", withHeader, r.TopicB, PathwayHeader, n)
	}
	mu.Unlock()

	tracer.Flush()
	payloads := sink.Payloads()
	if len(payloads) == 0 {
		t.Fatalf("no Data Streams payload reached the agent sink (requests: %d)", sink.Requests(PipelineStatsPath))
	}
	points := map[string][]statsPoint{} // by edge tags
	for _, body := range payloads {
		p := decodePayload(t, body)
		if p.Service != "relay" {
			t.Errorf("payload of service %q, want relay", p.Service)
		}
		for _, b := range p.Stats {
			for _, sp := range b.Stats {
				tags := slices.Clone(sp.EdgeTags)
				slices.Sort(tags)
				points[strings.Join(tags, ",")] = append(points[strings.Join(tags, ",")], sp)
			}
		}
	}
	chain := []string{
		"direction:out,topic:" + r.TopicA + ",type:kafka",
		"direction:in,group:" + relay.Group + ",topic:" + r.TopicA + ",type:kafka",
		"direction:out,topic:" + r.TopicB + ",type:kafka",
		"direction:in,topic:" + r.TopicB + ",type:kafka",
	}
	if len(points) != len(chain) {
		t.Errorf("checkpoints at %d edges, want %d: %v", len(points), len(chain), points)
	}
	var parent uint64
	for _, edge := range chain {
		ps := points[edge]
		if len(ps) == 0 {
			t.Fatalf("no checkpoint at %s; got %v", edge, points)
		}
		for _, sp := range ps {
			if sp.ParentHash != parent || sp.Hash == 0 || sp.Hash != ps[0].Hash {
				t.Fatalf("%s: hash %x after %x, want one non-zero hash after %x", edge, sp.Hash, sp.ParentHash, parent)
			}
		}
		parent = ps[0].Hash
	}
}
