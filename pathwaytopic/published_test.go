// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// published records what WithPublished reports.
type published struct {
	mu       sync.Mutex
	ok, errs int
	last     error
}

func (p *published) report(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.ok++
		return
	}
	p.errs++
	p.last = err
}

func (p *published) counts() (ok, errs int, last error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ok, p.errs, p.last
}

// TestRunReportsEachPublish: Run reports every window it tried to publish
// to WithPublished, nil when published, the error
// when not (what kretrieve.pathways.windows counts).
func TestRunReportsEachPublish(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	cl := newClient(t, b.Addr())
	if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
		t.Fatal(err)
	}
	var rep published
	p, err := NewPublisher(cl, &fakeSource{}, WithInterval(20*time.Millisecond), WithPublished(rep.report))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	poll.Until(t, 10*time.Second, func() bool { ok, _, _ := rep.counts(); return ok >= 3 }, "fewer than 3 windows reported")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The last window is reported too. A window in flight when ctx ends
	// fails with it (and franz-go fails the records queued behind it in
	// the partition, the last window's with them): only context.Canceled.
	ok, errs, last := rep.counts()
	if ok < 3 || ok+errs < 4 || (errs > 0 && !errors.Is(last, context.Canceled)) {
		t.Fatalf("reported %d published, %d failed (%v): want 3 and the last", ok, errs, last)
	}

	// A client that cannot produce: every window is reported failed.
	closed, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	var failed published
	p, err = NewPublisher(closed, &fakeSource{}, WithInterval(20*time.Millisecond), WithPublished(failed.report), WithPublished(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(t.Context())
	go func() { done <- p.Run(ctx) }()
	poll.Until(t, 10*time.Second, func() bool { _, n, _ := failed.counts(); return n >= 2 }, "fewer than 2 failures reported")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ok, n, last := failed.counts(); ok != 0 || n < 3 || !errors.Is(last, kgo.ErrClientClosed) {
		t.Fatalf("closed client: %d published, %d failed, last %v", ok, n, last)
	}
}
