// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// The broker-stall phase (issue 25): the broker SIGSTOPped for longer than
// the gateway's timeout while callers keep searching through the gateway.
const (
	gatewayTimeout = 10 * time.Second // the gateway's default --timeout
	stallFor       = 12 * time.Second // longer than gatewayTimeout
	stallRate      = 20               // searches a second
	stallPrefix    = "stall-"
)

// stallAnswer is one gateway answer of the stall phase.
type stallAnswer struct {
	id   string
	code int    // HTTP status; 0 when no answer
	api  string // the error body's code
	msg  string // and message
	took time.Duration
}

// stallPhase SIGSTOPs the broker for stallFor while callers search
// through the gateway at stallRate, from a second before the stall to a
// second after it, each search with its own request id (stallPrefix…) and
// its own goroutine (so that searches queue behind one another in the
// gateway's producer, as a steady stream of callers does), and returns
// every answer once the broker is back and they have all come.
func stallPhase(t testing.TB, brk *proc, gatewayAddr string, mark func(string, ...any)) []stallAnswer {
	t.Helper()
	var (
		mu      sync.Mutex
		answers []stallAnswer
		wg      sync.WaitGroup
	)
	stop := make(chan struct{})
	var callers sync.WaitGroup
	callers.Go(func() {
		tick := time.NewTicker(time.Second / stallRate)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			wg.Go(func() {
				a := stallSearch(gatewayAddr, fmt.Sprintf("%s%05d", stallPrefix, i))
				mu.Lock()
				answers = append(answers, a)
				mu.Unlock()
			})
		}
	})
	pause(t.Context(), time.Second) // searches in flight before the stall
	if err := brk.signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP the broker: %v", err)
	}
	mark("broker: SIGSTOP for %v (gateway timeout %v), %d searches a second", stallFor, gatewayTimeout, stallRate)
	pause(t.Context(), stallFor) // the stall under test
	if err := brk.signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT the broker: %v", err)
	}
	mark("broker: SIGCONT")
	pause(t.Context(), time.Second)
	close(stop)
	callers.Wait()
	wg.Wait()
	return answers
}

// holdLoad holds the paced load and the gateway searches, waits until
// what was published has its outcome, runs phase, and lets the load go on
// once the gateway answers 200 twice in a row again: the load's latency
// bound is about the other faults, not about a stall or a refusal made
// longer than it on purpose.
func holdLoad[T any](t testing.TB, hold *loadHold, led *ledger, gatewayAddr string, mark func(string, ...any), phase func() T) T {
	t.Helper()
	hold.start()
	defer hold.end()
	if !poll.Wait(drainTimeout, func() bool { return led.pending() == 0 }) {
		t.Errorf("%d acknowledged requests without an outcome before the phase", led.pending())
	}
	out := phase()
	ok := 0
	poll.Until(t, 60*time.Second, func() bool {
		if code, _ := searchDocs(gatewayAddr, probeQuery); code == http.StatusOK {
			ok++
		} else {
			ok = 0
		}
		return ok >= 2
	}, "the gateway answering again after the phase")
	mark("gateway answering again; load resumed")
	return out
}

// loadHold holds the paced load and the gateway searches during a phase.
// Its start waits for a gateway search already under way: one in flight
// when the broker was stopped had been answered 504 and counted as the
// load's failure, not the phase's.
type loadHold struct {
	held      atomic.Bool
	searching sync.Mutex // held by a gateway search of the load
}

// Load reports whether the load is held.
func (h *loadHold) Load() bool { return h.held.Load() }

// start holds the load, once the search under way (if any) has ended.
func (h *loadHold) start() {
	h.held.Store(true)
	h.searching.Lock()
	defer h.searching.Unlock()
}

// end lets the load go on.
func (h *loadHold) end() { h.held.Store(false) }

// search runs one of the load's searches unless the load is held, and
// reports whether it ran.
func (h *loadHold) search(f func()) bool {
	h.searching.Lock()
	defer h.searching.Unlock()
	if h.held.Load() {
		return false
	}
	f()
	return true
}

// stallSearch posts one search with the request id id.
func stallSearch(addr, id string) stallAnswer {
	body, _ := json.Marshal(map[string]string{"query": probeQuery, "request_id": id})
	cl := http.Client{Timeout: 3 * gatewayTimeout}
	start := time.Now()
	resp, err := cl.Post("http://"+addr+"/v1/search", "application/json", bytes.NewReader(body))
	a := stallAnswer{id: id, took: time.Since(start)}
	if err != nil {
		return a
	}
	defer resp.Body.Close()
	a.code = resp.StatusCode
	var e gateway.AcceptedResponse
	if resp.StatusCode != http.StatusOK && json.NewDecoder(resp.Body).Decode(&e) == nil && e.Error != nil {
		a.api, a.msg = e.Error.Code, e.Error.Message
	}
	return a
}

// checkStall asserts what the gateway told the stall phase's callers was
// true, once the pipeline has drained: a 504 only at the timeout, never
// earlier; a 504 that says "published" only for a request that was
// published; a 503 publish_failed, or a 503 refusal because requests wait
// beyond the budget, only for a request that never reached the requests
// topic; nothing else but 200. A 504 that says "not acknowledged … may
// still be published" is true either way. A request that reached the
// topic and was answered 504 carries the caller's deadline, which had
// passed: it may expire instead of being answered. checkStall returns
// those it found never answered, which the completeness's expired count
// must cover (checkExpired); any other request that reached the topic
// must have been answered (no loss).
func checkStall(t testing.TB, answers []stallAnswer, led *ledger) (expiredAfter504 []string) {
	t.Helper()
	codes := map[string]int{}
	var early, lost, unpublished504, published503, other []string
	for _, a := range answers {
		kind, _, _ := strings.Cut(a.msg, " ")
		codes[strings.TrimSpace(fmt.Sprintf("%d %s %s", a.code, a.api, kind))]++
		if led.published(a.id) && !led.answeredID(a.id) {
			if a.code == http.StatusGatewayTimeout {
				expiredAfter504 = append(expiredAfter504, a.id)
			} else {
				lost = append(lost, fmt.Sprintf("%s (told %d %s)", a.id, a.code, a.api))
			}
		}
		switch {
		case a.code == http.StatusOK:
		case a.code == http.StatusGatewayTimeout:
			if a.took < gatewayTimeout-250*time.Millisecond {
				early = append(early, fmt.Sprintf("%s after %v", a.id, a.took.Round(time.Millisecond)))
			}
			if strings.HasPrefix(a.msg, "published") && !led.published(a.id) {
				unpublished504 = append(unpublished504, a.id)
			}
		case a.code == http.StatusServiceUnavailable && (a.api == "publish_failed" || a.api == "overloaded" && kind == "requests"):
			if led.published(a.id) {
				published503 = append(published503, a.id)
			}
		default:
			other = append(other, fmt.Sprintf("%s: %d %s after %v", a.id, a.code, a.api, a.took.Round(time.Millisecond)))
		}
	}
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var summary []string
	for _, k := range keys {
		summary = append(summary, fmt.Sprintf("%s: %d", k, codes[k]))
	}
	t.Logf("stall phase: %d searches; by answer: %s", len(answers), strings.Join(summary, ", "))
	if len(answers) < stallRate*int(stallFor/time.Second) {
		t.Errorf("the stall phase sent only %d searches", len(answers))
	}
	if len(early) > 0 {
		t.Errorf("%d early 504s (before the %v timeout): %v", len(early), gatewayTimeout, early[:min(len(early), 10)])
	}
	if len(lost) > 0 {
		t.Errorf("%d requests published but never answered: %v", len(lost), lost[:min(len(lost), 10)])
	}
	if len(unpublished504) > 0 {
		t.Errorf("%d requests answered 504 \"published\" were never published: %v", len(unpublished504), unpublished504[:min(len(unpublished504), 10)])
	}
	if len(published503) > 0 {
		t.Errorf("%d requests answered 503 (publish_failed, or refused for the queue wait) were published after all: %v", len(published503), published503[:min(len(published503), 10)])
	}
	if len(other) > 0 {
		t.Errorf("%d other answers: %v", len(other), other[:min(len(other), 10)])
	}
	return expiredAfter504
}

// checkExpired asserts that the requests the stall phase's callers were
// told 504 and that were never answered are no more than the requests the
// pathway windows count as expired: they were not lost, they expired.
func checkExpired(t testing.TB, unanswered []string, expired uint64) {
	t.Helper()
	t.Logf("stall phase: %d requests answered 504 and never answered after; the pipeline counts %d expired", len(unanswered), expired)
	if uint64(len(unanswered)) > expired {
		t.Errorf("%d requests answered 504 were never answered, and only %d expired: lost %v", len(unanswered), expired, unanswered[:min(len(unanswered), 10)])
	}
}
