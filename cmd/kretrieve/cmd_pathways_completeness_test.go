// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/ops/status"
)

// steadySearches posts a search to the gateway at addr every 50 ms, each
// on its own (a stalled pipeline makes them wait for the gateway's
// timeout, and does not slow the load down), until the returned stop is
// called; it returns how many were posted.
func steadySearches(t *testing.T, addr string) (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	posted := 0
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			mu.Lock()
			posted++
			mu.Unlock()
			wg.Go(func() {
				resp, err := http.Post("http://"+addr+"/v1/search", "application/json", strings.NewReader(`{"query":"parse the query string","top_k":2}`))
				if err == nil {
					resp.Body.Close()
				}
			})
		}
	})
	stop = sync.OnceValue(func() int {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return posted
	})
	t.Cleanup(func() { stop() })
	return stop
}

// waitingAt returns the requests the report says wait at where.
func waitingAt(rep pathwaysReport, where string) uint64 {
	i := slices.IndexFunc(rep.Completeness.Waiting, func(w status.Waiting) bool { return w.Where == where })
	if i < 0 {
		return 0
	}
	return rep.Completeness.Waiting[i].Count
}

// TestPathwaysNamesAStalledEdge runs the pipeline's commands with traces
// off under steady searches, stops the enrichment stage, and checks that
// within 20 s `kretrieve pathways --json` names the edge where requests
// wait and how many are unfinished, from the pathway windows alone; once
// enrichment runs again, every cohort completes and the count returns to
// 0.
func TestPathwaysNamesAStalledEdge(t *testing.T) {
	b := brokertest.NewBroker(t, 3)
	addr := freeAddr(t)
	env := mapEnv(map[string]string{
		"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t), "KRETRIEVE_HTTP_LISTEN": addr,
		"KRETRIEVE_PATHWAYS_INTERVAL": "200ms", "KRETRIEVE_TIMEOUT": "2s",
		"OTEL_TRACES_SAMPLER": "always_off", "OTEL_TRACES_EXPORTER": "none",
	})
	startCommands(t, env, "retrieval")
	stopEnrichment := startCommand(t, env, "enrichment")
	startCommands(t, env, "gateway")
	waitReady(t, addr)
	stopSearches := steadySearches(t, addr)
	s := &searchTraffic{done: make(chan error)} // pollPathways's: never fails
	args := []string{"--unfinished-after", "2s"}
	poll := func(what string, done func(pathwaysReport) bool) (pathwaysReport, string) {
		return pollPathways(t, env, s, what, done, args...)
	}

	rep, _ := poll("complete cohorts", func(rep pathwaysReport) bool {
		return rep.Completeness.Entered > 20 && rep.Completeness.Unfinished == 0
	})
	t.Logf("before the stall: entered %d, ended %d", rep.Completeness.Entered, rep.Completeness.Ended)

	stopEnrichment()
	stalled := time.Now()
	const edge = "retrieval.candidates → enrichment"
	rep, out := poll("the stalled edge", func(rep pathwaysReport) bool {
		return rep.Completeness.Unfinished > 0 && waitingAt(rep, edge) > 0
	})
	named := time.Since(stalled)
	t.Logf("named %s with %d of %d unfinished requests %v after the stall:\n%s", edge, waitingAt(rep, edge), rep.Completeness.Unfinished, named.Round(time.Millisecond), out)
	if named > 20*time.Second {
		t.Errorf("the stalled edge was named %v after the stall: want within 20 s", named)
	}
	if rep.Completeness.Waiting[0].Where != edge {
		t.Errorf("most unfinished requests wait at %q, want %q", rep.Completeness.Waiting[0].Where, edge)
	}
	_, table := runPathwaysCommand(t, env, append([]string{"--once"}, args...)...)
	t.Logf("pathways --once during the stall:\n%s", table)
	if !strings.Contains(table, "unfinished, waiting at "+edge) {
		t.Errorf("the table does not name the edge:\n%s", table)
	}

	startCommands(t, env, "enrichment")
	time.AfterFunc(time.Second, func() { stopSearches() })
	rep, out = poll("every cohort complete again", func(rep pathwaysReport) bool {
		return rep.Completeness.Unfinished == 0 && rep.Completeness.Until.After(stalled.Add(5*time.Second))
	})
	posted := stopSearches()
	t.Logf("after the stall: %d searches posted; entered %d, ended %d:\n%s", posted, rep.Completeness.Entered, rep.Completeness.Ended, out)
	if len(rep.Completeness.Cohorts) != 0 || rep.Completeness.Ended < rep.Completeness.Entered {
		t.Errorf("unfinished cohorts remain: %+v", rep.Completeness)
	}
}
