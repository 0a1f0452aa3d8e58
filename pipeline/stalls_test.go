// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/internal/testutil/otlptest"
	"github.com/kretrieve/kretrieve/messages"
)

// The environment variables that pass a child worker its group settings
// (see childGroupSettings); unset or unparsable means the default.
const (
	sessionTimeoutEnv    = "KRETRIEVE_TEST_SESSION_TIMEOUT"
	rebalanceTimeoutEnv  = "KRETRIEVE_TEST_REBALANCE_TIMEOUT"
	heartbeatIntervalEnv = "KRETRIEVE_TEST_HEARTBEAT_INTERVAL"
	instanceIDEnv        = "KRETRIEVE_TEST_INSTANCE_ID"
)

// childGroupSettings returns a child worker's consumers.Config with the
// group settings its parent passed in the environment (groupSettingsEnv).
func childGroupSettings() consumers.Config {
	d := func(name string) time.Duration {
		v, _ := time.ParseDuration(os.Getenv(name))
		return v
	}
	return consumers.Config{
		SessionTimeout:    d(sessionTimeoutEnv),
		RebalanceTimeout:  d(rebalanceTimeoutEnv),
		HeartbeatInterval: d(heartbeatIntervalEnv),
		InstanceID:        os.Getenv(instanceIDEnv),
	}
}

// groupSettingsEnv is the environment that gives a child worker the group
// settings of c.
func groupSettingsEnv(c consumers.Config) []string {
	return []string{
		sessionTimeoutEnv + "=" + c.SessionTimeout.String(),
		rebalanceTimeoutEnv + "=" + c.RebalanceTimeout.String(),
		heartbeatIntervalEnv + "=" + c.HeartbeatInterval.String(),
		instanceIDEnv + "=" + c.InstanceID,
	}
}

// stallRun is what runRepeatedKills measured.
type stallRun struct {
	published int
	// longest is the longest any request waited for its answer, and
	// longestID that request.
	longest   time.Duration
	longestID string
	// lastAnswer is when the last request published before the last kill
	// was answered, measured from the last kill.
	lastAnswer time.Duration
	// unanswered counts the requests without an answer within the wait.
	unanswered int
	// group is the enrichment group's states and members as they changed
	// (see watchGroup), and the kills.
	group []string
}

// runRepeatedKills runs the pipeline with the worker group settings cfg:
// an enrichment and a retrieval worker in this process stay up, while a
// second enrichment worker, a separate process, is SIGKILLed kills times,
// every, and restarted at once after each kill, as a supervisor would
// (with cfg.InstanceID, the same id each time; the survivor is dynamic). A
// paced load (50 requests a second) runs from before the first kill until
// after the last; every request waits for its answer at most wait.
func runRepeatedKills(t *testing.T, cfg consumers.Config, kills int, every, wait time.Duration) stallRun {
	t.Helper()
	h := newHarness(t, 6)
	env := append(groupSettingsEnv(cfg), childEnv+"="+messages.StageEnrichment)
	victimID := cfg.InstanceID
	cfg.InstanceID = "" // the victim's, not the survivor's
	h.cfg.Worker = cfg
	srv := otlptest.NewServer(t)
	brokers := h.cfg.Kafka.Brokers[0]
	victim := startChildWith(t, brokers, srv.Endpoint(), env, nil)
	h.startWorkers()
	waitAssigned(t, brokers, messages.StageEnrichment, 2)
	c := h.client(true)
	watched := watchGroup(t, brokers, messages.StageEnrichment)

	type answer struct {
		id          string
		partition   int32
		published   time.Time
		answered    time.Time
		err         error
		beforeFinal bool // published before the last kill
	}
	var (
		mu      sync.Mutex
		answers []answer
		wg      sync.WaitGroup
	)
	var lastKill time.Time
	var lastKillMu sync.Mutex
	stop := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		tick := time.NewTicker(20 * time.Millisecond) // 50 requests a second
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			req := messages.Request{RequestID: fmt.Sprintf("stall-%05d", i), Query: "gzip"}
			lastKillMu.Lock()
			before := lastKill.IsZero()
			lastKillMu.Unlock()
			published := time.Now()
			call, err := c.Start(t.Context(), req, true)
			if err != nil {
				t.Errorf("publish %s: %v", req.RequestID, err)
				continue
			}
			wg.Go(func() {
				_, err := call.Wait(context.Background(), wait)
				a := answer{id: req.RequestID, published: published, answered: time.Now(), err: err, beforeFinal: before}
				if r, rerr := call.Acked(context.Background()); rerr == nil {
					a.partition = r.Partition
				}
				mu.Lock()
				answers = append(answers, a)
				mu.Unlock()
			})
		}
	}()

	// Load for a second before the first kill, so that every partition is
	// known busy.
	first := time.NewTimer(time.Second)
	<-first.C
	var killLog []string
	tick := time.NewTicker(every)
	for k := range kills {
		if k > 0 {
			<-tick.C
		}
		if k == kills-1 {
			lastKillMu.Lock()
			lastKill = time.Now()
			lastKillMu.Unlock()
		}
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s kill %d", time.Now().Format("15:04:05.0"), k+1)
		killLog = append(killLog, line)
		_ = victim.wait(t, 10*time.Second)
		victim = startChildWith(t, brokers, srv.Endpoint(), env, nil)
	}
	tick.Stop()
	// The load goes on a few seconds after the last kill.
	after := time.NewTimer(3 * time.Second)
	<-after.C
	close(stop)
	<-loadDone
	wg.Wait()

	var run stallRun
	run.group = append(watched(), killLog...)
	slices.Sort(run.group)
	byPartition := map[int32]time.Duration{}
	for _, a := range answers {
		run.published++
		took := a.answered.Sub(a.published)
		if a.err != nil {
			run.unanswered++
			t.Logf("%s (partition %d) unanswered after %v: %v", a.id, a.partition, took.Round(time.Millisecond), a.err)
		}
		byPartition[a.partition] = max(byPartition[a.partition], took)
		if took > run.longest {
			run.longest, run.longestID = took, a.id
		}
		if a.beforeFinal && a.err == nil {
			run.lastAnswer = max(run.lastAnswer, a.answered.Sub(lastKill))
		}
	}
	parts := make([]string, 0, len(byPartition))
	for p, d := range byPartition {
		parts = append(parts, fmt.Sprintf("%d:%v", p, d.Round(100*time.Millisecond)))
	}
	slices.Sort(parts)
	t.Logf("session %v, rebalance %v, heartbeat %v, victim's instance id %q: %d kills %v apart, %d requests, longest wait %v (%s), %d unanswered within %v; the last request published before the last kill answered %v after it; longest wait by partition %v",
		cfg.SessionTimeout, cfg.RebalanceTimeout, cfg.HeartbeatInterval, victimID, kills, every, run.published,
		run.longest.Round(time.Millisecond), run.longestID, run.unanswered, wait, run.lastAnswer.Round(time.Millisecond), parts)
	return run
}

// TestRestartedWorkersStallWithinTheBound kills an enrichment worker
// five times 3 s apart, restarting it each time with the same instance id
// (static membership, as a supervisor restarting a pod's container
// does), while a second enrichment worker stays up (runRepeatedKills),
// and asserts the documented bound on how long any request waits for its
// answer: the restart's rejoin waits for no one in a stable group, and
// at most the rebalance timeout in a rebalancing one, which its members
// join within a heartbeat: restart + rebalance timeout + heartbeat
// interval, where a restart (a new process of this test binary, ready
// to join) takes under 2 s on a loaded 2-core machine, so the bound is
// 8 s; the margin for the first fetch and a loaded machine is 2 s.
// Measured: 1.5 to 1.7 s. The 45 s session and 60 s rebalance timeouts
// of dynamic members before held requests 176 s (and more than 36 s,
// 359 unanswered, in this test).
func TestRestartedWorkersStallWithinTheBound(t *testing.T) {
	const (
		kills   = 5
		every   = 3 * time.Second
		restart = 2 * time.Second
		margin  = 2 * time.Second
	)
	cfg := consumers.Config{InstanceID: "enrichment-victim"}
	bound := restart + consumers.DefaultRebalanceTimeout + consumers.DefaultHeartbeatInterval
	run := runRepeatedKills(t, cfg, kills, every, bound+margin+5*time.Second)
	if run.unanswered > 0 || run.longest > bound+margin {
		for _, line := range run.group {
			t.Log(line)
		}
		t.Fatalf("longest wait %v (%s), %d unanswered: over the bound %v + %v margin (restart %v + rebalance %v + heartbeat %v)",
			run.longest.Round(time.Millisecond), run.longestID, run.unanswered, bound, margin,
			restart, consumers.DefaultRebalanceTimeout, consumers.DefaultHeartbeatInterval)
	}
}

// watchGroup records the group's state and its members' partition counts
// every 200 ms until the test ends (in a failed test's log, it shows
// which members a stall waited for); lines returns the changes so far.
func watchGroup(t *testing.T, brokers, group string) (lines func() []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		log []string
	)
	done := make(chan struct{})
	t.Cleanup(func() { <-done; cl.Close() })
	ctx := t.Context()
	go func() {
		defer close(done)
		adm := kadm.NewClient(cl)
		last := ""
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if gs, err := adm.DescribeGroups(ctx, group); err == nil {
				desc := gs[group].State
				for _, m := range gs[group].Members {
					n := 0
					if ca, ok := m.Assigned.AsConsumer(); ok {
						for _, tp := range ca.Topics {
							n += len(tp.Partitions)
						}
					}
					desc += fmt.Sprintf(" %s:%d", m.MemberID[max(0, len(m.MemberID)-6):], n)
				}
				if desc != last {
					mu.Lock()
					log = append(log, time.Now().Format("15:04:05.0")+" "+desc)
					mu.Unlock()
					last = desc
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(log)
	}
}
