// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// workLog records when each unit of stage work (a search, a highlight)
// started, by request number, and when each request's caller was answered.
type workLog struct {
	mu       sync.Mutex
	work     [][2]int64 // request number, start (Unix ns)
	answered []atomic.Int64
}

func (l *workLog) started(query string) {
	n, err := strconv.Atoi(strings.Fields(query)[0][1:]) // "q<n> …"
	if err != nil {
		return
	}
	l.mu.Lock()
	l.work = append(l.work, [2]int64{int64(n), time.Now().UnixNano()})
	l.mu.Unlock()
}

// serviceTime is the simulated cost of one search: one partition, one
// record at a time, so the pipeline's capacity is about 1/serviceTime.
const serviceTime = 20 * time.Millisecond

// slowIndex simulates a search costing serviceTime and logs the work of
// both stages.
type slowIndex struct {
	*search.Index
	log *workLog
}

func (s slowIndex) Search(ctx context.Context, query string, k int) ([]search.Hit, error) {
	s.log.started(query)
	t := time.NewTimer(serviceTime) // simulated work, not a wait for an event
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Index.Search(ctx, query, k)
}

func (s slowIndex) Highlight(ctx context.Context, query string, ids []string, maxRunes int) (map[string]search.Highlighted, error) {
	s.log.started(query)
	return s.Index.Highlight(ctx, query, ids, maxRunes)
}

// TestOverloadWastesNoWorkOnAnsweredCallers is the overload proof of
// issue 26: 3× the pipeline's capacity offered for 60 s (overloadFor)
// through a gateway with a 1 s timeout. Work started on
// requests whose caller had already been answered is at most 1% of all
// work; every request gets exactly one answer (200, 504, or 503 refused);
// and every admitted request ends as a result, a dead letter or expired,
// the counts adding up.
func TestOverloadWastesNoWorkOnAnsweredCallers(t *testing.T) {
	const (
		timeout     = time.Second
		overloadFor = 60 * time.Second
		capacity    = int(time.Second / serviceTime) // requests a second
		rate        = 3 * capacity
		offered     = rate * int(overloadFor/time.Second)
	)
	h := newHarness(t, 1)
	h.cfg.SearchTimeout = -1
	log := &workLog{answered: make([]atomic.Int64, offered)}
	idx := slowIndex{h.idx, log}
	h.startWorkersOn(idx, idx)
	srv, client := h.gateway(gateway.Config{Timeout: timeout, MaxInFlight: offered})

	statuses := make([]int, offered)
	ids := make([]string, offered)
	hc := &http.Client{Timeout: timeout + 10*time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	defer hc.CloseIdleConnections()
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range offered {
		<-tick.C // the open loop's pace: the offered load
		wg.Go(func() { statuses[i], ids[i] = search1(hc, srv, i, log) })
	}
	wg.Wait()

	count := map[int]int{}
	for i, s := range statuses {
		count[s]++
		if s != http.StatusOK && s != http.StatusGatewayTimeout && s != http.StatusServiceUnavailable {
			t.Errorf("request %d: status %d", i, s)
		}
	}
	admitted := offered - count[http.StatusServiceUnavailable]
	seen := map[string]bool{}
	for i, id := range ids {
		if statuses[i] == http.StatusOK && (id == "" || seen[id]) {
			t.Errorf("request %d: answer for %q not its own, or twice", i, id)
		}
		seen[id] = true
	}

	// Everything admitted ends: a result, a dead letter or expired.
	top := h.cfg.Topology()
	ended := func() (results, dead, expired int64) {
		results = topicRecords(t, h, top.Results())
		for _, s := range top.Stages {
			dead += topicRecords(t, h, messages.DLQTopic(s.Input))
		}
		return results, dead, expiredCount(t, h)
	}
	poll.Until(t, 60*time.Second, func() bool { r, d, e := ended(); return r+d+e >= int64(admitted) },
		"admitted requests did not all end")
	results, dead, expired := ended()
	if results+dead+expired != int64(admitted) {
		t.Errorf("%d results + %d dead letters + %d expired = %d, want the %d admitted", results, dead, expired, results+dead+expired, admitted)
	}
	if int64(count[http.StatusOK])+client.Collector.Late() != results {
		t.Errorf("%d answered 200 + %d late = %d, want the %d results", count[http.StatusOK], client.Collector.Late(), int64(count[http.StatusOK])+client.Collector.Late(), results)
	}

	// Work started after its caller was answered.
	log.mu.Lock()
	defer log.mu.Unlock()
	wasted, unanswered := 0, 0 // started after the answer; for a caller not answered 200
	for _, w := range log.work {
		if at := log.answered[w[0]].Load(); at != 0 && w[1] > at {
			wasted++
		}
		if statuses[w[0]] != http.StatusOK {
			unanswered++
		}
	}
	t.Logf("offered %d (%d/s for %s, capacity ~%d/s, timeout %s): 200 %d, 504 %d, 503 %d; results %d (late %d), dead letters %d, expired %d; work %d units, %d after the caller's answer (%.2f%%), %d started in time for callers answered 504 (%.1f%%)",
		offered, rate, overloadFor, capacity, timeout, count[http.StatusOK], count[http.StatusGatewayTimeout], count[http.StatusServiceUnavailable],
		results, client.Collector.Late(), dead, expired, len(log.work), wasted, 100*float64(wasted)/float64(max(len(log.work), 1)),
		unanswered-wasted, 100*float64(unanswered-wasted)/float64(max(len(log.work), 1)))
	if len(log.work) == 0 || float64(wasted) > 0.01*float64(len(log.work)) {
		t.Errorf("%d of %d units of work started after the caller was answered: over 1%%", wasted, len(log.work))
	}
}

// search1 posts search number i and records when its caller was answered;
// it returns the status and the answer's request id.
func search1(hc *http.Client, srv *httptest.Server, i int, log *workLog) (int, string) {
	body := fmt.Sprintf(`{"query":"q%d http server","request_id":"ov-%d"}`, i, i)
	resp, err := hc.Post(srv.URL+"/v1/search", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, ""
	}
	log.answered[i].Store(time.Now().UnixNano())
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal(b, &r)
	return resp.StatusCode, r.RequestID
}
