// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
)

// bin is the kretrieve binary under test, built by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kretrieve-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "kretrieve")
		build := exec.Command("go", "build", "-o", bin, "github.com/kretrieve/kretrieve/cmd/kretrieve")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build kretrieve:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// Chaos run parameters.
const (
	loadRate      = 100 // requests per second during the fault phases
	kills         = 5   // SIGKILLs of one worker per stage, killGap apart
	killGap       = 3 * time.Second
	addPartitions = 3     // added to every pipeline topic and its DLQ mid-run
	poisonLetters = 20000 // dead letters the replay phase replays (enough for a replay to be killed mid-way)
	drainTimeout  = 2 * time.Minute
	maxPollRecs   = 500 // the workers' --max-poll-records default
)

// TestChaos runs the pipeline as separate kretrieve processes and, under a
// paced load, SIGKILLs each stage's worker five times 3 s apart, SIGTERMs
// every worker, adds partitions to every topic, SIGKILLs the broker (which
// persists to a data directory) and SIGKILLs a dead-letter replay half-way.
// No acknowledged request may be lost; duplicates stay within what
// at-least-once allows for the records a killed worker had not committed,
// and a killed replay republishes at most one commit batch again.
//
// The ingest phase runs alongside: `kretrieve ingest` seeds the documents
// topic with the Go corpus, and every worker follows the topic into an
// index directory of its own, kept across its restarts (one is SIGKILLed
// mid catch-up before the load starts), with --health-listen on a port of
// its own. Through every fault a documents load publishes upserts with
// changed bodies, new ids and tombstones, as a foreign producer would (the
// first deletes the first answer to probeQuery). Once the load has stopped
// and drained, the topic's final state is read from its start
// (topicState); every worker's GET /v1/index must reach the topic's end
// offsets with that state's digest and document count, a restarted
// worker must have resumed from its stored position (applied fewer records
// than the topic holds), and the gateway must answer the load's latest
// versions by their revision words and never the deleted probe. At the
// very end the workers are stopped and the documents stored in their
// directories are read back one by one (checkStored).
func TestChaos(tt *testing.T) {
	t := repeatFailures(tt)
	began := time.Now()
	logs := os.Getenv("KRETRIEVE_CHAOS_LOGS")
	if logs == "" {
		logs = t.TempDir()
	} else if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	brokerAddr, gatewayAddr := freePort(t), freePort(t)
	topics := messages.DefaultTopics()
	common := []string{"KRETRIEVE_BROKERS=" + brokerAddr, "KRETRIEVE_PATHWAYS_INTERVAL=" + pathwaysInterval.String()}

	brk := &proc{name: "broker", dir: logs, args: []string{"broker", "--listen", brokerAddr, "--data-dir", t.TempDir()}}
	brk.start(t)
	t.Cleanup(brk.kill)
	admin := kafkaClient(t, brokerAddr)
	adm := kadm.NewClient(admin)
	poll.Until(t, 30*time.Second, func() bool {
		_, err := adm.BrokerMetadata(context.Background())
		return err == nil
	}, "broker at %s", brokerAddr)
	seed := seedDocuments(t, logs, common, brokerAddr, topics.Documents)

	indexes := t.TempDir()
	health := map[string]string{} // each worker's --health-listen
	worker := func(stage string, n int) *proc {
		// A stable instance id per worker (static membership), as a
		// pod's name gives one: a restarted worker takes its partitions
		// back at once (docs/operations.md, Crashes). Its own index
		// directory follows the documents topic, and a restart resumes
		// from the position stored there.
		name := fmt.Sprintf("%s-%d", stage, n)
		health[name] = freePort(t)
		p := &proc{name: name, dir: logs, env: common, args: []string{stage, "--instance-id", name,
			"--index", filepath.Join(indexes, name), "--health-listen", health[name]}}
		p.start(t)
		t.Cleanup(p.kill)
		return p
	}
	r0, r1 := worker("retrieval", 0), worker("retrieval", 1)
	e0, e1 := worker("enrichment", 0), worker("enrichment", 1)
	gw := &proc{name: "gateway", dir: logs, args: []string{"gateway", "--http-listen", gatewayAddr}, env: common}
	gw.start(t)
	t.Cleanup(gw.kill)
	workers := []*proc{r0, r1, e0, e1}
	var timeline []string
	mark := func(format string, args ...any) {
		line := fmt.Sprintf("%6.1fs  ", time.Since(began).Seconds()) + fmt.Sprintf(format, args...)
		timeline = append(timeline, line)
		t.Log(line)
	}
	mark("%s", killMidCatchUp(t, r1, health[r1.name]))
	mark("%s", waitReady(t, workers, health))

	led := newLedger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reader := kafkaClient(t, brokerAddr,
		kgo.ConsumeTopics(topics.Requests, topics.Results, messages.DLQTopic(topics.Requests),
			messages.DLQTopic(topics.Candidates), messages.DLQTopic(topics.Results)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(250*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	var readers sync.WaitGroup
	readers.Go(func() { led.read(ctx, reader, topics) })
	producer := loadProducer(t, ctx, brokerAddr)

	// The gateway answers a search only when its pipeline is up.
	probe := firstSearch(t, gatewayAddr)

	// The load: paced Kafka requests, a search through the gateway every
	// 200 ms, and paced changes to the documents, until stopLoad.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var loads sync.WaitGroup
	var hold loadHold // the load and the gateway searches held (the stall and refused-writes phases)
	loads.Go(func() { pacedLoad(loadCtx, ctx, led, producer, topics.Requests, &hold) })
	gws := &gatewayStats{hold: &hold}
	loads.Go(func() { gws.drive(loadCtx, gatewayAddr) })
	docs := newDocLoad(topics.Documents, seed, probe)
	// The documents load writes as a foreign producer would: no pathway.
	docProducer := kafkaClient(t, brokerAddr)
	loads.Go(func() { docs.run(loadCtx, ctx, docProducer) })
	mark("load started; the documents load deletes %q first (the first answer to %q)", probe, probeQuery)
	pause(ctx, 3*time.Second)

	// Repeated SIGKILLs of one worker per stage, restarted at once, as a
	// supervisor would.
	sigkills := 0
	for _, p := range []*proc{r0, e0} {
		mark("%s: %d SIGKILLs %v apart", p.name, kills, killGap)
		for range kills {
			if _, err := p.stop(t, syscall.SIGKILL, 10*time.Second); err == nil {
				t.Errorf("%s exited cleanly on SIGKILL", p.name)
			}
			sigkills++
			p.start(t)
			pause(ctx, killGap)
		}
	}

	// A graceful stop of every worker in turn.
	for _, p := range workers {
		took, err := p.stop(t, syscall.SIGTERM, 60*time.Second)
		mark("%s: SIGTERM, exited in %v (%v)", p.name, took.Round(time.Millisecond), err)
		if err != nil {
			t.Errorf("%s: SIGTERM: exit %v", p.name, err)
		}
		p.start(t)
		pause(ctx, time.Second)
	}

	// Partitions added to every topic, DLQs included.
	all := []string{topics.Requests, topics.Candidates, topics.Results}
	for _, tp := range all[:3] {
		all = append(all, messages.DLQTopic(tp))
	}
	resp, err := adm.CreatePartitions(ctx, addPartitions, all...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("add partitions: %v", err)
	}
	mark("added %d partitions to %s", addPartitions, strings.Join(all, ", "))
	pause(ctx, 10*time.Second)

	// The broker SIGKILLed and started again on its data directory.
	brokerDown := time.Now()
	_, _ = brk.stop(t, syscall.SIGKILL, 10*time.Second)
	mark("broker: SIGKILL")
	pause(ctx, time.Second)
	brk.start(t)
	poll.Until(t, 30*time.Second, func() bool {
		_, err := adm.BrokerMetadata(context.Background())
		return err == nil
	}, "the broker back at %s", brokerAddr)
	brokerUp := time.Now()
	mark("broker: restarted, answering after %v", brokerUp.Sub(brokerDown).Round(time.Millisecond))
	pause(ctx, 10*time.Second)

	// The broker stalled (SIGSTOP) longer than the gateway's timeout, with
	// only the stall phase's callers searching: what the gateway tells them
	// is checked once the pipeline has drained.
	stall := holdLoad(t, &hold, led, gatewayAddr, mark, func() []stallAnswer { return stallPhase(t, brk, gatewayAddr, mark) })

	// The broker refusing the retrieval workers' output for a while, with
	// only the phase's own requests coming.
	type rates struct{ log, rewind map[string]float64 }
	refused := holdLoad(t, &hold, led, gatewayAddr, mark, func() rates {
		l, r := refusedWritesPhase(t, ctx, adm, led, producer, topics.Requests, topics.Candidates, []*proc{r0, r1}, mark)
		return rates{l, r}
	})

	stopLoad()
	loads.Wait()
	// The documents load's last records may still be on their way
	// (produced with ctx, which outlives the load's): every one must be on
	// the topic before its final state is read (the state read once missed
	// the last record, at an offset the workers had applied).
	if err := docProducer.Flush(ctx); err != nil {
		t.Errorf("documents load: flush: %v", err)
	}
	loadStopped := time.Now()
	mark("load stopped; draining")
	if !poll.Wait(drainTimeout, func() bool { return led.pending() == 0 }) {
		t.Errorf("%d acknowledged requests without an outcome %v after the load stopped", led.pending(), drainTimeout)
	}
	mark("drained")

	expiredAfter504 := checkStall(t, stall, led)
	checkRefused(t, refused.log, refused.rewind)

	// The ingest phase's end: every worker's documents are the topic's.
	final := checkDocuments(t, brokerAddr, gatewayAddr, workers, health, docs, loadStopped)
	mark("documents checked")

	// The replay phase: poison records dead-lettered, a replay SIGKILLed
	// after killReplayAt letters, then run again to the end.
	for i := range poisonLetters {
		led.publish(ctx, producer, topics.Requests, fmt.Sprintf("%s%05d", poisonPrefix, i), []byte("{not json"))
	}
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, errs := led.ackedPoison(); n != poisonLetters {
		t.Fatalf("%d of %d poison records acknowledged by the broker; produce errors: %v", n, poisonLetters, errs)
	}
	poll.Until(t, time.Minute, func() bool { k, _, _, _ := led.poison(); return k == poisonLetters },
		"%d poison records dead-lettered", poisonLetters)
	mark("%d poison records dead-lettered", poisonLetters)
	dlqTopic := messages.DLQTopic(topics.Requests)
	committed := func() int64 {
		offs, err := adm.FetchOffsets(ctx, dlq.DefaultReplayGroup)
		if err != nil {
			return 0
		}
		var n int64
		for _, o := range offs[dlqTopic] {
			n += max(o.At, 0)
		}
		return n
	}
	replay := &proc{name: "replay", dir: logs, args: []string{"dlq", "replay", "--dlq-topic", dlqTopic}, env: common}
	replay.start(t)
	t.Cleanup(replay.kill)
	poll.Until(t, time.Minute, func() bool { return committed() > 0 }, "the replay's first commit")
	_, _ = replay.stop(t, syscall.SIGKILL, 10*time.Second)
	killedAt := committed()
	mark("replay: SIGKILL with %d of %d letters committed", killedAt, poisonLetters)
	if killedAt >= poisonLetters {
		t.Fatalf("the replay had committed all %d letters when it was killed: raise poisonLetters", killedAt)
	}
	// Every letter the killed replay republished is dead-lettered again
	// before the second run starts, so that run's end offsets hold them.
	quiet := func() bool { _, letters, on, _ := led.poison(); return letters == on }
	poll.Until(t, time.Minute, quiet, "the replayed poison records dead-lettered again")
	_, _, firstRun, _ := led.poison()
	replay.start(t)
	if err, ok := replay.exited(2 * time.Minute); !ok || err != nil {
		t.Fatalf("second replay: exited %v, err %v", ok, err)
	}
	poll.Until(t, time.Minute, quiet, "the second replay's records dead-lettered again")
	_, _, total, perKey := led.poison()
	mark("replay: run again to the end; poison records on %s by how often each appears: %v", topics.Requests, perKey)

	// A poison key appears once as published, once per replay of its first
	// letter, and once more when the killed run had republished it (its
	// second letter is replayed by the second run). Four appearances: the
	// killed run republished it and had not committed it, so the second
	// run republished its first letter again.
	replayDup := perKey[4]
	for n, keys := range perKey {
		if n < 2 || n > 4 {
			t.Errorf("%d poison keys appear %d times on %s: want 2 to 4", keys, n, topics.Requests)
		}
	}
	cancel()
	readers.Wait()
	if final != nil {
		// The documents the workers store, read back once they stopped.
		checkStored(t, workers, indexes, final, docs.known())
		mark("workers stopped; their stored documents checked")
	}

	// Every request of every cohort ended, as the pathway windows alone
	// tell (a result, a dead letter or an expiry).
	comp := completeness(t, common, time.Now())
	mark("completeness: %d entered, %d ended (%d expired, %d dead-lettered), %d unfinished",
		comp.Entered, comp.Ended, comp.Expired, comp.DeadLettered, comp.Unfinished)
	if comp.Unfinished > 0 || comp.Entered == 0 {
		b, _ := json.Marshal(comp)
		t.Errorf("kretrieve pathways: %d of %d requests unfinished, want 0 of some: %s", comp.Unfinished, comp.Entered, b)
	}
	checkExpired(t, expiredAfter504, comp.Expired)

	r := led.count()
	t.Logf("timeline:\n%s", strings.Join(timeline, "\n"))
	t.Logf("load: sent %d (unacknowledged %d: %v), answered %d, dead-lettered %d, duplicated %d, lost %d",
		r.Sent, r.Unacked, led.produceErrs, r.Answered, r.DeadLettered, r.Duplicated, r.Lost)
	t.Logf("latency publish to first outcome: p99 %v, max %v (%s)", r.P99Latency.Round(time.Millisecond), r.MaxLatency.Round(time.Millisecond), r.SlowestID)
	for _, s := range r.Slowest {
		t.Logf("  slow: %s published at %6.1fs waited %v", s.ID, s.Issued.Sub(began).Seconds(), s.Wait.Round(time.Millisecond))
	}
	t.Logf("gateway: %s", gws)
	t.Logf("replay: %d letters; the killed run republished %d, the second %d; republished again after the SIGKILL: %d (bound %d)",
		poisonLetters, firstRun-poisonLetters, total-firstRun, replayDup, dlq.DefaultReplayCommitEvery)
	t.Logf("took %v; logs in %s", time.Since(began).Round(time.Second), logs)

	if r.Lost > 0 {
		t.Errorf("%d acknowledged requests lost: %v", r.Lost, r.LostIDs[:min(len(r.LostIDs), 20)])
	}
	// The longest documented stall of these faults: a static member
	// restarted after a SIGKILL, restart + rebalance timeout + heartbeat
	// (2 + 5 + 1 s, docs/operations.md), with the 2 s margin of
	// TestRestartedWorkersStallWithinTheBound.
	if bound := 10 * time.Second; r.MaxLatency > bound {
		t.Errorf("request %s waited %v for its outcome: more than the documented stall bound %v", r.SlowestID, r.MaxLatency, bound)
	}
	if n := gws.failures(); n > 0 {
		t.Errorf("%d gateway searches were not answered 200: %s", n, gws)
	}
	if r.Sent < loadRate*20 {
		t.Errorf("only %d requests sent: the load did not run", r.Sent)
	}
	// At-least-once redelivers what a worker had taken but not committed:
	// at most its buffered records (2 × max-poll-records), for each
	// SIGKILL and for each worker when the broker is killed under it.
	if bound := (sigkills + len(workers)) * 2 * maxPollRecs; r.Duplicated > bound {
		t.Errorf("%d duplicates, more than (%d SIGKILLs + %d workers) × 2 × %d buffered records allow (%d)", r.Duplicated, sigkills, len(workers), maxPollRecs, bound)
	}
	if replayDup > dlq.DefaultReplayCommitEvery {
		t.Errorf("the killed replay's letters were republished again %d times: more than one commit batch (%d)", replayDup, dlq.DefaultReplayCommitEvery)
	}
	for _, p := range append(workers, brk, gw, replay) {
		if found := p.grep("panic:", "DATA RACE"); len(found) > 0 {
			t.Errorf("%s:\n%s", p.name, strings.Join(found, "\n"))
		}
	}
}

// firstSearch waits until the gateway answers probeQuery 200 and returns
// the probe: the first document of that answer ("" when it has none),
// which the documents load deletes first thing.
func firstSearch(t testing.TB, addr string) string {
	t.Helper()
	var first []messages.Document
	poll.Until(t, 60*time.Second, func() bool {
		code, docs := searchDocs(addr, probeQuery)
		first = docs
		return code == http.StatusOK
	}, "the gateway's first search")
	if len(first) == 0 {
		return ""
	}
	return first[0].ID
}

// probeQuery is the query of the gateway's searches and of some of the
// load's requests; its first answer at the start is the document the
// documents load deletes first.
const probeQuery = "gzip"

// pacedLoad publishes a request every 1/loadRate s until ctx is done. The
// records are produced with produceCtx, which outlives ctx: with the load's
// own context, records still buffered when the load stopped were failed
// with "context canceled", and so were 481 of the later poison burst's
// (franz-go fails a batch by its first record's context).
func pacedLoad(ctx, produceCtx context.Context, led *ledger, cl *kgo.Client, topic string, hold *loadHold) {
	queries := []string{probeQuery, "parse a URL", "encode json", "tar archive", "sha256", "regular expression"}
	tick := time.NewTicker(time.Second / loadRate)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if hold.Load() {
			continue
		}
		id := fmt.Sprintf("chaos-%06d", i)
		led.publish(produceCtx, cl, topic, id, requestValue(id, queries[i%len(queries)]))
	}
}

// requestValue is the encoded request id for query.
func requestValue(id, query string) []byte {
	v, err := messages.EncodeRequest(messages.Request{RequestID: id, Query: query}.WithDefaults())
	if err != nil {
		panic(err) // a fixed, valid request
	}
	return v
}

// gatewayStats counts the gateway's answers by status.
type gatewayStats struct {
	hold     *loadHold // no search while held
	mu       sync.Mutex
	statuses map[int]int
	failed   int // answers other than 200
}

func (g *gatewayStats) failures() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failed
}

func (g *gatewayStats) drive(ctx context.Context, addr string) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var code int
		if !g.hold.search(func() { code, _ = searchDocs(addr, probeQuery) }) {
			continue
		}
		g.mu.Lock()
		if g.statuses == nil {
			g.statuses = map[int]int{}
		}
		g.statuses[code]++
		if code != http.StatusOK {
			g.failed++
		}
		g.mu.Unlock()
	}
}

func (g *gatewayStats) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, _ := json.Marshal(g.statuses)
	return "searches by status " + string(b)
}

// searchDocs posts one search to the gateway and returns its status (0:
// no answer) and, when 200, the documents it answered.
func searchDocs(addr, query string) (int, []messages.Document) {
	body, _ := json.Marshal(map[string]string{"query": query})
	cl := http.Client{Timeout: 20 * time.Second}
	resp, err := cl.Post("http://"+addr+"/v1/search", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var answer gateway.SearchResponse
	if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&answer) != nil {
		return -1, nil // a 200 whose body is not an answer
	}
	return resp.StatusCode, answer.Documents
}

// kafkaClient is a franz-go client of the broker at addr, closed with t.
func kafkaClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// freePort returns a 127.0.0.1 address no one listens on.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
