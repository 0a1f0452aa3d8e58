// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// Ingest load parameters.
const (
	docRate       = 50   // document records per second during the fault phases
	maxDocRecords = 6000 // the most the ingest load publishes (about 2 minutes' worth)
	newDocPrefix  = "chaos-doc-"
	revisionWord  = "chaosrevision" // + the record's number: a word only that version holds
)

// topicState is the documents topic's final state as its records say it,
// read from the log start to the end offsets: per id, the latest document;
// a tombstone deletes. A value that is not a valid document changes
// nothing, as a follower dead-letters it.
type topicState struct {
	docs    map[string]search.Document
	ends    map[int32]int64 // the end offsets read up to, by partition
	records int             // records read
	invalid int             // records that are not a valid document or tombstone
}

// digest is the digest of the state's (id, version) pairs, which a
// worker's GET /v1/index must report once it has applied up to ends.
func (s *topicState) digest() search.Digest {
	var d search.Digest
	for id, doc := range s.docs {
		d.Add(id, doc.Hash())
	}
	return d
}

// total is the number of offsets the topic holds: a worker that applied
// this many records since it started rebuilt its index from the start.
func (s *topicState) total() int64 {
	var n int64
	for _, e := range s.ends {
		n += e
	}
	return n
}

// readDocuments reads topic from its log start to its end offsets as of
// now, every partition, without a consumer group.
func readDocuments(ctx context.Context, addr, topic string) (*topicState, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, serr := adm.ListStartOffsets(ctx, topic)
	ends, eerr := adm.ListEndOffsets(ctx, topic)
	if err := errors.Join(serr, eerr, starts.Error(), ends.Error()); err != nil {
		return nil, fmt.Errorf("list offsets of %s: %w", topic, err)
	}
	st := &topicState{docs: map[string]search.Document{}, ends: map[int32]int64{}}
	from := map[int32]kgo.Offset{}
	ends.Each(func(e kadm.ListedOffset) {
		st.ends[e.Partition] = e.Offset
		if s, ok := starts.Lookup(topic, e.Partition); ok && s.Offset < e.Offset {
			from[e.Partition] = kgo.NewOffset().At(s.Offset)
		}
	})
	if len(from) == 0 {
		return st, nil
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	home := map[string]int32{} // the partition of each key
	var misplaced []string
	for len(from) > 0 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w (partitions left %v)", topic, err, from)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if _, reading := from[r.Partition]; !reading || r.Offset >= st.ends[r.Partition] {
				return
			}
			if r.Offset+1 >= st.ends[r.Partition] {
				delete(from, r.Partition)
			}
			if p, ok := home[string(r.Key)]; ok && p != r.Partition {
				misplaced = append(misplaced, string(r.Key))
			}
			home[string(r.Key)] = r.Partition
			st.fold(r)
		})
	}
	if len(misplaced) > 0 {
		// The latest value of a key on two partitions is not defined.
		return nil, fmt.Errorf("%d ids on more than one partition of %s, such as %q", len(misplaced), topic, misplaced[0])
	}
	return st, nil
}

// fold applies one record to the state.
func (s *topicState) fold(r *kgo.Record) {
	if r.Attrs.IsControl() {
		return
	}
	s.records++
	id := string(r.Key)
	switch {
	case id == "":
		s.invalid++
	case r.Value == nil:
		delete(s.docs, id)
	default:
		doc, err := corpus.ParseDocument(r.Value)
		if err != nil || doc.ID != id {
			s.invalid++
			return
		}
		s.docs[id] = doc
	}
}

// docLoad publishes changes to the documents topic at docRate, as a
// foreign producer would (key: the id; value: corpus.EncodeDocument; a nil
// value deletes): upserts of existing ids with a changed body, new ids,
// and tombstones. It keeps the state it intends, as a cross-check of the
// topic's.
type docLoad struct {
	topic     string
	probe     string // deleted first, and never published again
	base      map[string]search.Document
	templates []string // the seed's ids, templates of new documents
	ids       []string // the ids changed (the probe apart), new ones added
	rng       *rand.Rand

	mu    sync.Mutex
	want  map[string]search.Document // the seed's state, changed by every record published
	word  map[string]string          // the revision word of an id's latest version, when the load wrote it
	sent  map[string]int             // records published, by kind
	acked int
	errs  map[string]int // produce errors by text
}

func newDocLoad(topic string, seed *topicState, probe string) *docLoad {
	ids := slices.Sorted(maps.Keys(seed.docs))
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == probe })
	return &docLoad{topic: topic, probe: probe, base: maps.Clone(seed.docs), templates: slices.Clone(ids), ids: ids,
		rng: rand.New(rand.NewPCG(24, 7)), want: maps.Clone(seed.docs), word: map[string]string{},
		sent: map[string]int{}, errs: map[string]int{}}
}

// run deletes the probe, then publishes a change every 1/docRate s until
// ctx is done or maxDocRecords are published; records are produced with
// produceCtx (see pacedLoad).
func (l *docLoad) run(ctx, produceCtx context.Context, cl *kgo.Client) {
	if l.probe != "" {
		l.publish(produceCtx, cl, "delete", l.probe, nil, "")
	}
	tick := time.NewTicker(time.Second / docRate)
	defer tick.Stop()
	for i := range maxDocRecords {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		word := fmt.Sprintf("%s%d", revisionWord, i)
		switch i % 10 {
		case 7: // a new document, after a template
			tpl := l.base[l.templates[l.rng.IntN(len(l.templates))]]
			id := fmt.Sprintf("%s%05d", newDocPrefix, i)
			tpl.ID, tpl.Title = id, "chaos document "+id
			l.base[id] = tpl
			l.ids = append(l.ids, id)
			tpl.Body += " " + word
			l.publish(produceCtx, cl, "add", id, &tpl, word)
		case 8, 9: // a delete, maybe of an id deleted already
			l.publish(produceCtx, cl, "delete", l.ids[l.rng.IntN(len(l.ids))], nil, "")
		default: // an upsert, maybe of an id deleted before
			id := l.ids[l.rng.IntN(len(l.ids))]
			d := l.base[id]
			d.Body += " " + word
			l.publish(produceCtx, cl, "upsert", id, &d, word)
		}
	}
}

// publish produces one change (doc nil: a tombstone) and records it in
// the intended state.
func (l *docLoad) publish(ctx context.Context, cl *kgo.Client, kind, id string, doc *search.Document, word string) {
	var value []byte
	l.mu.Lock()
	if doc == nil {
		delete(l.want, id)
		delete(l.word, id)
	} else {
		v, err := corpus.EncodeDocument(*doc)
		if err == nil {
			var parsed search.Document
			parsed, err = corpus.ParseDocument(v)
			l.want[id], l.word[id], value = parsed, word, v
		}
		if err != nil {
			l.errs["encode: "+err.Error()]++
			l.mu.Unlock()
			return
		}
	}
	l.sent[kind]++
	l.mu.Unlock()
	cl.Produce(ctx, &kgo.Record{Topic: l.topic, Key: []byte(id), Value: value}, func(_ *kgo.Record, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			l.errs[err.Error()]++
			return
		}
		l.acked++
	})
}

// report returns what the load published and the digest of the state it
// intends; complete is whether every record was acknowledged.
func (l *docLoad) report() (summary string, want search.Digest, complete bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, d := range l.want {
		want.Add(id, d.Hash())
	}
	n := 0
	for _, c := range l.sent {
		n += c
	}
	b, _ := json.Marshal(l.sent)
	return fmt.Sprintf("published %d document records %s, acknowledged %d, errors %v; intended state %s", n, b, l.acked, l.errs, want),
		want, l.acked == n && len(l.errs) == 0
}

// latest returns an id of want whose latest version the load wrote and
// whose id has prefix (or not, with !new), with that version's word; ""
// when there is none.
func (l *docLoad) latest(added bool) (id, word, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(l.word)) {
		if strings.HasPrefix(id, newDocPrefix) == added {
			return id, l.word[id], l.want[id].Hash()
		}
	}
	return "", "", ""
}

// indexStatus returns a worker's GET /v1/index.
func indexStatus(addr string) (docfeed.Status, error) {
	var s docfeed.Status
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/v1/index")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("GET /v1/index: %s", resp.Status)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// at reports whether offsets equal ends on every partition (a missing
// partition is at 0) and name no other.
func at(offsets, ends map[int32]int64) bool {
	for p, e := range ends {
		if offsets[p] != e {
			return false
		}
	}
	for p := range offsets {
		if _, ok := ends[p]; !ok {
			return false
		}
	}
	return true
}

// checkConverged waits until every worker's GET /v1/index reports the
// topic's end offsets applied, then asserts that its documents are the
// topic's final state (digest and count) and that a worker restarted
// resumed from its stored position rather than rebuilding. It logs
// when each reached the end offsets, counted from stopped (the end of the
// documents load).
func checkConverged(t testing.TB, workers []*proc, health map[string]string, st *topicState, stopped time.Time, timeout time.Duration) {
	t.Helper()
	want := st.digest()
	began := time.Now()
	for _, p := range workers {
		var s docfeed.Status
		var err error
		if !poll.WaitEvery(timeout-time.Since(began), 20*time.Millisecond, func() bool {
			s, err = indexStatus(health[p.name])
			return err == nil && at(s.Offsets, st.ends)
		}) {
			t.Errorf("%s: not at the topic's end offsets %v %v after the documents load stopped: offsets %v (%v)",
				p.name, st.ends, timeout, s.Offsets, err)
			continue
		}
		t.Logf("%s: at the end offsets %v %v after the documents load stopped: applied %d records since its last start (incarnation %d), documents %d, digest %s, dead-lettered %d",
			p.name, s.Offsets, time.Since(stopped).Round(time.Millisecond), s.Applied, p.incarnations(), s.Documents, s.Digest, s.DeadLettered)
		if s.Digest != want.String() || s.Documents != len(st.docs) {
			t.Errorf("%s: documents %d, digest %s; the topic's final state: %d, %s", p.name, s.Documents, s.Digest, len(st.docs), want)
		}
		if p.incarnations() > 1 && s.Applied >= st.total() {
			t.Errorf("%s applied %d records since its last start, as many as the topic holds (%d): it did not resume from its stored position",
				p.name, s.Applied, st.total())
		}
	}
}

// checkSearches asserts what the gateway answers once every worker has
// converged: the probe, deleted first, is not among the answers to
// probeQuery, which found it before; the latest version the load wrote of
// an existing id and of a new id is found by its revision word.
func checkSearches(t testing.TB, gw string, load *docLoad, st *topicState, probeQuery string) {
	t.Helper()
	if load.probe != "" {
		code, docs := searchDocs(gw, probeQuery)
		_, inTopic := st.docs[load.probe]
		found := slices.ContainsFunc(docs, func(d messages.Document) bool { return d.ID == load.probe })
		t.Logf("search %q (found %s before its delete): %d, %d documents, %s among them: %v", probeQuery, load.probe, code, len(docs), load.probe, found)
		if code != http.StatusOK || found || inTopic {
			t.Errorf("the deleted %s: in the topic's final state %v; search %q answered %d with it among the documents: %v",
				load.probe, inTopic, probeQuery, code, found)
		}
	}
	for _, added := range []bool{false, true} {
		id, word, _ := load.latest(added)
		if id == "" {
			t.Errorf("no document (new: %v) ends at a version the load wrote", added)
			continue
		}
		doc, ok := st.docs[id]
		code, docs := searchDocs(gw, word)
		i := slices.IndexFunc(docs, func(d messages.Document) bool { return d.ID == id })
		t.Logf("search %q: %d, %d documents, %s at %d", word, code, len(docs), id, i)
		switch {
		case !ok:
			t.Errorf("%s: the load's latest version is not in the topic's final state", id)
		case code != http.StatusOK || i < 0:
			t.Errorf("search %q answered %d without %s, whose latest version holds the word: %+v", word, code, id, docs)
		case docs[i].Version != doc.Hash():
			t.Errorf("search %q answered %s at version %s, the topic's is %s", word, id, docs[i].Version, doc.Hash())
		}
	}
}

// seedDocuments publishes the Go corpus to the documents topic with
// `kretrieve ingest` and returns the topic's state then.
func seedDocuments(t testing.TB, logs string, env []string, brokerAddr, topic string) *topicState {
	t.Helper()
	began := time.Now()
	ing := &proc{name: "ingest", dir: logs, args: []string{"ingest", "--topic-documents", topic}, env: env}
	ing.start(t)
	t.Cleanup(ing.kill)
	if err, ok := ing.exited(5 * time.Minute); !ok || err != nil {
		t.Fatalf("kretrieve ingest: exited %v, err %v", ok, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seed, err := readDocuments(ctx, brokerAddr, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(seed.docs) == 0 || seed.invalid > 0 {
		t.Fatalf("kretrieve ingest left %d documents and %d invalid records on %s", len(seed.docs), seed.invalid, topic)
	}
	t.Logf("kretrieve ingest: %d documents on %s in %v, digest %s", len(seed.docs), topic, time.Since(began).Round(time.Millisecond), seed.digest())
	return seed
}

// killMidCatchUp SIGKILLs p once its index has applied a first batch of
// the topic, while it is still catching up, and starts it again: the new
// incarnation resumes from the position stored with that batch. It
// returns what happened, for the timeline.
func killMidCatchUp(t testing.TB, p *proc, health string) string {
	t.Helper()
	var s docfeed.Status
	if !poll.WaitEvery(2*time.Minute, 20*time.Millisecond, func() bool {
		var err error
		s, err = indexStatus(health)
		return err == nil && (s.Applied > 0 || s.Ready)
	}) {
		t.Fatalf("%s applied nothing of the documents topic in 2 minutes", p.name)
	}
	if s.Ready {
		return fmt.Sprintf("%s: caught up (%d records) before it could be SIGKILLed mid catch-up", p.name, s.Applied)
	}
	if _, err := p.stop(t, syscall.SIGKILL, 10*time.Second); err == nil {
		t.Errorf("%s exited cleanly on SIGKILL", p.name)
	}
	p.start(t)
	return fmt.Sprintf("%s: SIGKILL mid catch-up, %d records applied, %d behind", p.name, s.Applied, s.Behind)
}

// waitReady waits until every worker's GET /readyz answers 200 (its index
// has caught up with the topic) and returns how long each took.
func waitReady(t testing.TB, workers []*proc, health map[string]string) string {
	t.Helper()
	began := time.Now()
	var took []string
	for _, p := range workers {
		cl := http.Client{Timeout: 5 * time.Second}
		if !poll.WaitEvery(3*time.Minute, 100*time.Millisecond, func() bool {
			resp, err := cl.Get("http://" + health[p.name] + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}) {
			t.Fatalf("%s: not ready 3 minutes after the workers started", p.name)
		}
		took = append(took, fmt.Sprintf("%s %v", p.name, time.Since(began).Round(time.Millisecond)))
	}
	return "workers' indexes caught up with the documents topic (ready within): " + strings.Join(took, ", ")
}

// checkDocuments reads the documents topic's final state once the load
// has stopped, checks it against the state the load intended (every
// acknowledged change on the topic), then checks every worker against it
// (checkConverged) and the gateway's answers (checkSearches). stopped is
// when the documents load stopped. It returns the topic's state, nil when
// the topic could not be read.
func checkDocuments(t testing.TB, brokerAddr, gw string, workers []*proc, health map[string]string, load *docLoad, stopped time.Time) *topicState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := readDocuments(ctx, brokerAddr, load.topic)
	if err != nil {
		t.Errorf("documents topic: %v", err)
		return nil
	}
	summary, want, complete := load.report()
	t.Logf("documents load: %s", summary)
	t.Logf("documents topic: %d records to end offsets %v, %d invalid; final state %s", st.records, st.ends, st.invalid, st.digest())
	if complete && want != st.digest() {
		t.Errorf("the topic's final state %s is not the one the load's acknowledged records make, %s", st.digest(), want)
	}
	checkConverged(t, workers, health, st, stopped, 2*time.Minute)
	checkSearches(t, gw, load, st, probeQuery)
	for _, p := range workers {
		for _, line := range p.grep("rebuilding the index", "index ready") {
			t.Logf("  %s", line)
		}
	}
	return st
}

// known returns every id the topic may hold: the seed's and the new ones
// the load added. Call it once run has returned.
func (l *docLoad) known() []string {
	ids := slices.Clone(l.ids)
	if l.probe != "" {
		ids = append(ids, l.probe)
	}
	return ids
}

// checkStored stops every worker with SIGTERM, opens its index directory
// (under indexes, by its name) read-only and checks the documents stored
// there, one by one, against the topic's final state: every id of known
// present at the topic's version (the Hash of the document read back) or
// absent as the topic says, no other document, and the stored position
// and digest those of the topic. This does not rest on the digest a
// worker keeps alongside its documents.
func checkStored(t testing.TB, workers []*proc, indexes string, st *topicState, known []string) {
	t.Helper()
	want := st.digest()
	for _, p := range workers {
		if _, err := p.stop(t, syscall.SIGTERM, time.Minute); err != nil {
			t.Errorf("%s: SIGTERM: exit %v", p.name, err)
		}
		ix, err := search.Open(filepath.Join(indexes, p.name))
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		var missing, resurrected, stale []string
		for _, id := range known {
			doc, held := ix.Document(id)
			w, ok := st.docs[id]
			switch {
			case ok && !held:
				missing = append(missing, id)
			case !ok && held:
				resurrected = append(resurrected, id)
			case ok && doc.Hash() != w.Hash():
				stale = append(stale, id)
			}
		}
		pos, digest, n := ix.Position(), ix.Digest(), ix.Len()
		_ = ix.Close()
		t.Logf("%s: stored %d documents, position %v, digest %s; of %d ids: %d missing, %d resurrected, %d at another version",
			p.name, n, pos.Offsets, digest, len(known), len(missing), len(resurrected), len(stale))
		if len(missing)+len(resurrected)+len(stale) > 0 || n != len(st.docs) {
			t.Errorf("%s: stores %d documents, the topic's final state %d; missing %q, resurrected %q, at another version %q (10 at most of each)",
				p.name, n, len(st.docs), missing[:min(len(missing), 10)], resurrected[:min(len(resurrected), 10)], stale[:min(len(stale), 10)])
		}
		if !at(pos.Offsets, st.ends) || digest != want {
			t.Errorf("%s: stored position %v and digest %s; the topic's end offsets %v and digest %s", p.name, pos.Offsets, digest, st.ends, want)
		}
	}
}
