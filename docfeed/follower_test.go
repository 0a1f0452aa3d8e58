// SPDX-License-Identifier: Apache-2.0

package docfeed_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
)

// TestUpsertAndDeleteLive: a document published while the follower runs
// becomes searchable, a changed body is what is found next, and a
// tombstone removes it from search and from the stored documents.
func TestUpsertAndDeleteLive(t *testing.T) {
	e := newEnv(t, 3)
	f := e.start("retrieval", "")
	f.waitReady(t)
	e.upsert(1, doc("walrus", "the walrus operator assigns"))
	poll.Until(t, 10*time.Second, func() bool { return slices.Contains(f.ids(t, "walrus"), "walrus") }, "the upsert searchable")
	e.upsert(1, doc("walrus", "now about pelicans"))
	poll.Until(t, 10*time.Second, func() bool { return slices.Contains(f.ids(t, "pelicans"), "walrus") }, "the update searchable")
	if got := f.ids(t, "operator"); slices.Contains(got, "walrus") {
		t.Errorf("the old body is still found: %v", got)
	}
	e.remove(1, "walrus")
	// The document is gone as soon as bleve's batch is in; the position
	// and the status a moment later.
	poll.Until(t, 10*time.Second, func() bool { return !f.has("walrus") && f.Status().Offsets[1] == 3 }, "the delete applied")
	if got := f.ids(t, "pelicans walrus"); len(got) != 0 {
		t.Errorf("deleted document still found: %v", got)
	}
	if s := f.Status(); s.Documents != 0 || s.Offsets[1] != 3 || !s.Ready {
		t.Errorf("status %+v", s)
	}
	if pos, newest, ok := f.Index().Freshness(); !ok || pos != 3 || time.Since(newest) > time.Minute || time.Since(newest) < 0 {
		t.Errorf("Freshness() = %d, %v, %v; want 3 records applied, the last one just now", pos, newest, ok)
	}
}

// TestNotReadyUntilCaughtUp: a follower started on a topic that already
// holds documents is ready only once it has applied them all.
func TestNotReadyUntilCaughtUp(t *testing.T) {
	e := newEnv(t, 3)
	for p := range int32(3) {
		e.upsert(p, docs(fmt.Sprintf("p%d", p), 700, "backlog")...)
	}
	f := e.start("retrieval", "")
	if err := f.Ready(); err == nil {
		// Possible only if it applied 2100 documents already: check it.
		if f.Index().Len() != 2100 {
			t.Fatalf("ready with %d of 2100 documents", f.Index().Len())
		}
	} else if !strings.Contains(err.Error(), "catching up") && !strings.Contains(err.Error(), "not started") {
		t.Errorf("Ready() = %v", err)
	}
	f.waitReady(t)
	if n := f.Index().Len(); n != 2100 {
		t.Errorf("ready with %d documents, want 2100", n)
	}
	if s := f.Status(); s.Behind != 0 || s.Applied != 2100 {
		t.Errorf("status when ready: %+v", s)
	}
}

// TestRestartResumesFromItsPosition: a follower on a directory, stopped
// and started again, applies only what was published meanwhile.
func TestRestartResumesFromItsPosition(t *testing.T) {
	e := newEnv(t, 2)
	dir := t.TempDir() + "/index"
	e.upsert(0, docs("a", 300, "first")...)
	e.upsert(1, docs("b", 200, "first")...)
	f := e.start("retrieval", dir)
	f.waitReady(t)
	digest := f.Index().Digest()
	f.stop()

	e.upsert(1, doc("late", "published while the worker was down"))
	e.remove(0, "a-7")
	g := e.start("retrieval", dir)
	g.waitReady(t)
	if s := g.Status(); s.Applied != 2 || s.Documents != 500 || s.Offsets[0] != 301 || s.Offsets[1] != 201 {
		t.Errorf("after restart: %+v, want 2 records applied, 500 documents", s)
	}
	if g.has("a-7") || !g.has("late") {
		t.Error("the changes made while it was down are not applied")
	}
	if g.Index().Digest() == digest {
		t.Error("digest unchanged by the changes")
	}
	_, newest, _ := g.Index().Freshness()
	g.stop()

	// Restarted with nothing new to apply, it still knows how fresh its
	// index is: the newest record's time is kept in the index.
	h := e.start("retrieval", dir)
	h.waitReady(t)
	if pos, got, ok := h.Index().Freshness(); !ok || pos != 502 || !got.Equal(newest) {
		t.Errorf("Freshness() after a restart with nothing new = %d, %v, %v; want 502, %v", pos, got, ok, newest)
	}
}

// TestLogStartRebuild: records deleted from the topic before a stopped
// follower read them (a tombstone among them) make it rebuild from the
// log start, so the deleted document does not come back.
func TestLogStartRebuild(t *testing.T) {
	e := newEnv(t, 1)
	dir := t.TempDir() + "/index"
	e.upsert(0, doc("kept", "a document"), doc("doomed", "deleted while the worker is down"))
	f := e.start("retrieval", dir)
	f.waitReady(t)
	f.stop()

	e.remove(0, "doomed")                         // offset 2
	e.upsert(0, doc("kept", "a document, again")) // offset 3
	var upTo kadm.Offsets
	upTo.Add(kadm.Offset{Topic: topic, Partition: 0, At: 3})
	resp, err := e.adm.DeleteRecords(t.Context(), upTo)
	if err != nil || resp.Error() != nil {
		t.Fatalf("delete records: %v %v", err, resp.Error())
	}
	g := e.start("retrieval", dir)
	g.waitReady(t)
	if g.has("doomed") {
		t.Error("the deleted document came back: the follower resumed past records it never saw")
	}
	if !g.has("kept") || g.Index().Len() != 1 {
		t.Errorf("after the rebuild: %d documents, kept=%v", g.Index().Len(), g.has("kept"))
	}
	if !strings.Contains(g.logs.String(), "rebuilding the index") {
		t.Errorf("no rebuild logged:\n%s", g.logs.String())
	}
}

// TestHostileDocumentsAreDeadLettered: records that are not documents go
// to the dead-letter topic with their reason, and the documents after them
// are applied.
func TestHostileDocumentsAreDeadLettered(t *testing.T) {
	e := newEnv(t, 1)
	f := e.start("retrieval", "")
	f.waitReady(t)
	big := `{"id":"big","title":"t","body":"` + strings.Repeat("x", messages.MaxDocumentBytes) + `"}`
	e.publish(
		&kgo.Record{Topic: topic, Value: []byte(`{"id":"nokey","title":"t","body":"b"}`)},
		&kgo.Record{Topic: topic, Key: []byte("badjson"), Value: []byte(`{"id":`)},
		&kgo.Record{Topic: topic, Key: []byte("other"), Value: []byte(`{"id":"mismatch","title":"t","body":"b"}`)},
		&kgo.Record{Topic: topic, Key: []byte("markup"), Value: []byte(`{"id":"markup","title":"<script>x</script>","body":"b"}`)},
		&kgo.Record{Topic: topic, Key: []byte("big"), Value: []byte(big)},
	)
	e.upsert(0, doc("fine", "a good document after the bad ones"))
	poll.Until(t, 10*time.Second, func() bool { return f.has("fine") }, "the good document applied")
	letters := readAll(t, e, messages.DLQTopic(topic), 5)
	reasons := map[string]string{}
	for _, l := range letters {
		reasons[string(l.Key)] = deadletters.FromRecord(l).Reason
	}
	for key, want := range map[string]string{"": "without a key", "badjson": "invalid json", "other": "not the document's id", "markup": "HTML markup", "big": "bytes"} {
		if !strings.Contains(reasons[key], want) {
			t.Errorf("dead letter of %q: reason %q, want it to say %q", key, reasons[key], want)
		}
	}
	if s := f.Status(); s.DeadLettered != 5 || s.Documents != 1 {
		t.Errorf("status %+v", s)
	}
}

// readAll reads want records of topic from its start.
func readAll(t *testing.T, e *env, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	poll.Until(t, 10*time.Second, func() bool {
		fs := cl.PollRecords(t.Context(), 0)
		out = append(out, fs.Records()...)
		return len(out) >= want
	}, "%d records on %s", want, topic)
	return out
}

// TestFollowersAgree: two followers applying changes as they come and a
// third started late end with the same documents (digest), the same
// answers, and the topic's final state.
func TestFollowersAgree(t *testing.T) {
	e := newEnv(t, 3)
	a, b := e.start("retrieval", ""), e.start("enrichment", t.TempDir()+"/index")
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"kafka", "index", "freshness", "tombstone", "pathway", "digest"}
	for round := range 20 {
		for i := range 40 {
			id := fmt.Sprintf("d%d", rng.IntN(300))
			p := int32(len(id) % 3) // a key stays on one partition
			if rng.IntN(5) == 0 {
				e.remove(p, id)
				continue
			}
			e.upsert(p, doc(id, fmt.Sprintf("round %d change %d about %s", round, i, words[rng.IntN(len(words))])))
		}
	}
	c := e.start("late", "")
	want := e.topicState()
	for _, f := range []*follower{a, b, c} {
		poll.Until(t, 30*time.Second, func() bool { return f.Index().Digest() == want }, "follower's digest %v = the topic's %v", f.Index().Digest(), want)
	}
	for _, w := range words {
		ia, ib, ic := a.ids(t, w), b.ids(t, w), c.ids(t, w)
		if !slices.Equal(ia, ib) || !slices.Equal(ia, ic) {
			t.Errorf("%q: answers differ:\n%v\n%v\n%v", w, ia, ib, ic)
		}
	}
	if want.Count == 0 {
		t.Fatal("no documents left: the test proves nothing")
	}
}

// TestEmptiedPartitionIsCaughtUp: a partition whose records were all
// deleted (log start = end > 0) holds nothing to apply: a new follower is
// ready at once, not waiting for offsets that will never come.
func TestEmptiedPartitionIsCaughtUp(t *testing.T) {
	e := newEnv(t, 2)
	e.upsert(0, doc("gone", "deleted by retention"), doc("gone-too", "also"))
	e.upsert(1, doc("kept", "still there"))
	var upTo kadm.Offsets
	upTo.Add(kadm.Offset{Topic: topic, Partition: 0, At: 2})
	if resp, err := e.adm.DeleteRecords(t.Context(), upTo); err != nil || resp.Error() != nil {
		t.Fatalf("delete records: %v %v", err, resp.Error())
	}
	f := e.start("retrieval", "")
	f.waitReady(t)
	if s := f.Status(); f.has("gone") || !f.has("kept") || s.Behind != 0 || s.Offsets[0] != 2 {
		t.Errorf("after an emptied partition: %+v", s)
	}
}
