// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
)

// TestGracefulStopsRedeliverNothing runs a paced load through two
// retrieval workers, one in process and one a separate process that is
// stopped with SIGTERM and started again, stops times. A graceful stop
// finishes its batch: every request is answered exactly once, no record
// of either stage is processed twice (counted by the process spans of
// every worker, keyed by partition and offset), the collector drops no
// duplicate, and the stopped workers log nothing at error level.
func TestGracefulStopsRedeliverNothing(t *testing.T) {
	const (
		stops = 5
		rate  = 250
		n     = 6_000
	)
	h := newHarness(t, 6)
	srv := otlptest.NewServer(t)
	h.startWorkers() // one retrieval, one enrichment, in process
	c := h.client(true)
	l := startPacedLoad(t, c, n, rate, 3*time.Minute)
	waitProgress(t, l, rate)

	var took []time.Duration
	for i := range stops {
		w := startChild(t, h.cfg.Kafka.Brokers[0], srv.Endpoint())
		waitAssigned(t, h.cfg.Kafka.Brokers[0], messages.StageRetrieval, 2)
		// Stopped while it processes: some of its process spans are in.
		before := countProcessSpans(srv.Spans(), "retrieval.requests")
		poll.Until(t, time.Minute, func() bool { return countProcessSpans(srv.Spans(), "retrieval.requests") >= before+50 },
			"stop %d: the child processed nothing", i+1)
		if l.progress.Load() >= n {
			t.Fatalf("stop %d: the load ended before it", i+1)
		}
		start := time.Now()
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := w.wait(t, 30*time.Second); err != nil {
			t.Fatalf("stop %d: worker: %v\n%s", i+1, err, w.stderr.String())
		}
		took = append(took, time.Since(start))
		for _, bad := range []string{"level=ERROR", "context canceled"} {
			if strings.Contains(w.stderr.String(), bad) {
				t.Errorf("stop %d: the stopped worker logged %q:\n%s", i+1, bad, w.stderr.String())
			}
		}
	}

	t.Logf("stops done after %d outcomes", l.progress.Load())
	completed, deadLettered := l.check(t)
	if completed != n || deadLettered != 0 {
		t.Errorf("%d of %d requests completed, %d dead-lettered", completed, n, deadLettered)
	}
	if dups := c.Collector.Duplicates(); dups != 0 {
		t.Errorf("%d duplicate results", dups)
	}
	spans := append(h.recorded(), fromOTLP(srv.Spans())...)
	redelivered := 0
	for _, topic := range []string{"retrieval.requests", "retrieval.candidates"} {
		records, again := processedTwice(spans, topic)
		redelivered += again
		if records != n || again != 0 {
			t.Errorf("%s: %d records processed, %d of them more than once; want %d, none twice", topic, records, again, n)
		}
	}
	t.Logf("%d requests at %d/s, %d SIGTERMs of a retrieval worker: %d records processed twice, %d duplicate results; time to stop %v",
		n, rate, stops, redelivered, c.Collector.Duplicates(), took)
}

// countProcessSpans counts the process spans of topic among spans from the
// OTLP sink.
func countProcessSpans(spans []otlptest.Span, topic string) int {
	n := 0
	for _, s := range spans {
		if s.Name == "process "+topic {
			n++
		}
	}
	return n
}

// processedTwice returns how many records of topic have a process span,
// and how many have more than one: a record redelivered and processed
// again.
func processedTwice(spans []span, topic string) (records, again int) {
	seen := make(map[string]int)
	for _, s := range spans {
		if s.Name != "process "+topic {
			continue
		}
		seen[fmt.Sprint(s.Attrs["messaging.destination.partition.id"], "/", s.Attrs["messaging.kafka.offset"])]++
	}
	for _, k := range seen {
		if k > 1 {
			again++
		}
	}
	return len(seen), again
}
