// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kretrieve/kretrieve/producer"
)

// ReadyTimeout bounds a /readyz answer: a check still running then (a
// broker that does not answer) is answered 503 at once and goes on in the
// background, one at a time, for the next probes to find.
const ReadyTimeout = 2 * time.Second

// NotReadyAfterPublishFailure is how long /readyz answers 503 after a
// request failed to be published or acknowledged (a broker refusing
// writes, or not answering them), unless a later one was published: a
// load balancer then sends callers to another gateway meanwhile.
const NotReadyAfterPublishFailure = 10 * time.Second

// readiness is the state of /readyz: the check in flight, and the last
// publish failure not followed by a success.
type readiness struct {
	mu       sync.Mutex
	flight   *readyFlight
	failedAt time.Time
	failure  error
}

// readyFlight is one run of the readiness check; err is set before done
// is closed.
type readyFlight struct {
	done chan struct{}
	err  error
}

// check runs the readiness check, or joins the one in flight, and waits
// for it at most until ctx ends. The check runs with ReadyTimeout whatever
// the caller's context, so a check ignoring its context (a Kafka client
// dialling) stays a single goroutine.
func (rd *readiness) check(ctx context.Context, ready func(context.Context) error) error {
	rd.mu.Lock()
	f := rd.flight
	if f == nil {
		f = &readyFlight{done: make(chan struct{})}
		rd.flight = f
		go func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReadyTimeout)
			defer cancel()
			f.err = ready(cctx)
			rd.mu.Lock()
			rd.flight = nil
			rd.mu.Unlock()
			close(f.done)
		}()
	}
	rd.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return fmt.Errorf("readiness check not answered within %s: is Kafka reachable?", ReadyTimeout)
	}
}

// published records the outcome of a request's publishing (the error of
// producer.Call.Wait or Call.Acked): a failure to publish, or no
// acknowledgement by the deadline, makes the gateway not ready for
// NotReadyAfterPublishFailure; a request published clears it. A caller
// that went away says nothing about Kafka.
func (g *Gateway) published(err error) {
	rd := &g.readiness
	switch {
	case err == nil, errors.Is(err, producer.ErrTimeout) && !errors.Is(err, producer.ErrNotAcknowledged):
		rd.mu.Lock()
		rd.failure = nil
		rd.mu.Unlock()
	case errors.Is(err, producer.ErrNotPublished), errors.Is(err, producer.ErrNotAcknowledged), errors.Is(err, context.DeadlineExceeded):
		rd.mu.Lock()
		rd.failedAt, rd.failure = time.Now(), err
		rd.mu.Unlock()
	}
}

// publishFailure returns the recent publish failure that makes the gateway
// not ready, or nil.
func (rd *readiness) publishFailure() error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.failure == nil {
		return nil
	}
	if ago := time.Since(rd.failedAt); ago < NotReadyAfterPublishFailure {
		return fmt.Errorf("a request failed to publish %s ago: %w", ago.Round(time.Millisecond), rd.failure)
	}
	return nil
}
