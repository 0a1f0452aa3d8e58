//go:build chaos

package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/search"
)

// ingestRate is the documents per second the ingest load publishes during
// the fault phases: upserts of changed documents, new ones and tombstones.
const ingestRate = 50

// seedDocuments publishes the Go corpus to the documents topic with
// `kretrieve ingest`, as an operator would before starting the workers.
func seedDocuments(t *testing.T, brokerAddr string) {
	t.Helper()
	cmd := exec.Command(bin, "ingest")
	cmd.Env = append(cmd.Environ(), append(quietTelemetry, "KRETRIEVE_BROKERS="+brokerAddr)...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "8352 published") && !strings.Contains(string(out), "published") {
		t.Fatalf("kretrieve ingest: %v\n%s", err, out)
	}
	t.Logf("seeded: %s", strings.TrimSpace(lastLine(string(out))))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// ingestLoad publishes, at ingestRate until ctx is done, changed versions
// of the corpus's documents, new documents and tombstones, as a foreign
// producer would (key = id, value = the document, no value = delete), and
// counts what the broker acknowledged.
func ingestLoad(ctx context.Context, cl *kgo.Client, topic string, docs []search.Document, acked *atomic.Int64) {
	tick := time.NewTicker(time.Second / ingestRate)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r := &kgo.Record{Topic: topic}
		switch d := docs[(i*7919)%len(docs)]; i % 5 {
		case 0: // a tombstone
			r.Key = []byte(d.ID)
		case 1: // a new document
			n := search.Document{ID: fmt.Sprintf("chaos-doc-%d", i), Title: "chaos document", Body: fmt.Sprintf("written during the chaos run, number %d", i), Source: "chaos"}
			r.Key, r.Value = []byte(n.ID), mustEncode(n)
		default: // a changed document
			d.Body += fmt.Sprintf(" (revision %d)", i)
			r.Key, r.Value = []byte(d.ID), mustEncode(d)
		}
		cl.Produce(context.WithoutCancel(ctx), r, func(_ *kgo.Record, err error) {
			if err == nil {
				acked.Add(1)
			}
		})
	}
}

func mustEncode(d search.Document) []byte {
	v, err := corpus.EncodeDocument(d)
	if err != nil {
		panic(err) // a valid corpus document, changed in its body only
	}
	return v
}

// topicState reads topic from its start to its current end offsets and
// returns the end offsets and the digest of the final state: the last
// value of each key, tombstones deleting.
func topicState(t *testing.T, brokerAddr, topic string) (map[int32]int64, search.Digest) {
	t.Helper()
	adm := kadm.NewClient(kafkaClient(t, brokerAddr))
	ends, err := adm.ListEndOffsets(t.Context(), topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("end offsets of %s: %v %v", topic, err, ends.Error())
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	cl := kafkaClient(t, brokerAddr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	state, got := map[string]string{}, map[int32]int64{}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for !reached(got, want) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s to its end: %v (at %v, end %v)", topic, ctx.Err(), got, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = r.Offset + 1
			if r.Value == nil {
				delete(state, string(r.Key))
				return
			}
			if d, err := corpus.ParseDocument(r.Value); err == nil && d.ID == string(r.Key) {
				state[d.ID] = d.Hash()
			}
		})
	}
	var dg search.Digest
	for id, v := range state {
		dg.Add(id, v)
	}
	return want, dg
}

// reached reports whether got is at or past want on every partition.
func reached(got, want map[int32]int64) bool {
	for p, o := range want {
		if got[p] < o {
			return false
		}
	}
	return true
}

// indexStatus is a worker's GET /v1/index.
func indexStatus(addr string) (docfeed.Status, error) {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/v1/index")
	if err != nil {
		return docfeed.Status{}, err
	}
	defer resp.Body.Close()
	var s docfeed.Status
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// checkDocuments waits until every worker (name → health address) has
// applied the topic up to ends and checks that its documents are the
// topic's final state (want).
func checkDocuments(t *testing.T, health map[string]string, ends map[int32]int64, want search.Digest) {
	t.Helper()
	for name, addr := range health {
		start := time.Now()
		var s docfeed.Status
		var err error
		if !poll.WaitEvery(time.Minute, 50*time.Millisecond, func() bool {
			s, err = indexStatus(addr)
			return err == nil && maps.Equal(s.Offsets, ends)
		}) {
			t.Errorf("%s: did not apply the documents topic to its end %v within a minute: %+v, %v", name, ends, s, err)
			continue
		}
		t.Logf("%s: %d documents, digest %s, %d records applied by this incarnation, converged in %v",
			name, s.Documents, s.Digest, s.Applied, time.Since(start).Round(time.Millisecond))
		if s.Digest != want.String() || int64(s.Documents) != want.Count {
			t.Errorf("%s: documents %d, digest %s; the topic's final state: %d documents, digest %s", name, s.Documents, s.Digest, want.Count, want)
		}
	}
}
