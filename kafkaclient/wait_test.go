// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// refusingAddr returns a 127.0.0.1 address nothing listens on: a port the
// kernel just handed out and that was closed again.
func refusingAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// logTap is a slog handler that keeps every record and sends each on
// records without blocking (nil: none).
type logTap struct {
	mu      sync.Mutex
	msgs    []string
	levels  []slog.Level
	records chan slog.Record
}

func (h *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (h *logTap) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logTap) WithGroup(string) slog.Handler            { return h }
func (h *logTap) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Message)
	h.levels = append(h.levels, r.Level)
	h.mu.Unlock()
	select {
	case h.records <- r:
	default:
	}
	return nil
}

// retries returns the retry records' messages and levels.
func (h *logTap) retries() (msgs []string, levels []slog.Level) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, m := range h.msgs {
		if strings.HasPrefix(m, "kafka not reachable") {
			msgs, levels = append(msgs, m), append(levels, h.levels[i])
		}
	}
	return msgs, levels
}

// TestWaitReachableUntilTheBrokerStarts: a long-running command started
// before its broker retries, logging each retry at warn with the address,
// the delay and the attempt, and returns as soon as a broker listens on the
// address. The broker starts on the event of the second retry record.
func TestWaitReachableUntilTheBrokerStarts(t *testing.T) {
	addr := refusingAddr(t)
	tap := &logTap{records: make(chan slog.Record, 16)}
	done := make(chan error, 1)
	policy := kafkaclient.UntilReachable()
	policy.Initial, policy.Max = 20*time.Millisecond, 40*time.Millisecond
	go func() {
		done <- kafkaclient.WaitReachable(t.Context(), kafkaclient.Config{Brokers: []string{addr}}, slog.New(tap), policy)
	}()
	for n := 0; n < 2; {
		select {
		case r := <-tap.records:
			if strings.HasPrefix(r.Message, "kafka not reachable") {
				n++
			}
		case err := <-done:
			t.Fatalf("returned before a broker listened: %v", err)
		}
	}
	b, err := broker.Start(broker.Config{Listen: addr})
	if err != nil {
		t.Fatalf("start the broker on %s: %v", addr, err)
	}
	t.Cleanup(b.Close)
	if err := <-done; err != nil {
		t.Fatalf("after the broker started: %v", err)
	}
	msgs, levels := tap.retries()
	if len(msgs) < 2 {
		t.Fatalf("retry records: %q", msgs)
	}
	// Each delay doubles (20 ms, then 40 ms, the cap) and has equal
	// jitter: the wait logged is within [delay/2, delay].
	for i, step := range []time.Duration{20 * time.Millisecond, 40 * time.Millisecond} {
		m := regexp.MustCompile(`^kafka not reachable at (.+), retrying in (\S+) \(attempt (\d+)\)$`).FindStringSubmatch(msgs[i])
		var wait time.Duration
		if m != nil {
			wait, err = time.ParseDuration(m[2])
		}
		if m == nil || err != nil || m[1] != addr || m[3] != strconv.Itoa(i+1) || wait < step/2 || wait > step || levels[i] != slog.LevelWarn {
			t.Errorf("retry record %d: %s %q, want WARN \"kafka not reachable at %s, retrying in [%v, %v] (attempt %d)\"", i, levels[i], msgs[i], addr, step/2, step, i+1)
		}
	}
}

// TestWaitReachableOneShotGivesUp: a one-shot command fails after
// GiveUpAfter with one error naming the brokers and the attempts, matching
// ErrUnreachable, and logs its retries at debug only.
func TestWaitReachableOneShotGivesUp(t *testing.T) {
	addr := refusingAddr(t)
	tap := &logTap{}
	policy := kafkaclient.OneShot()
	policy.GiveUpAfter = 300 * time.Millisecond
	start := time.Now()
	err := kafkaclient.WaitReachable(t.Context(), kafkaclient.Config{Brokers: []string{addr}}, slog.New(tap), policy)
	took := time.Since(start)
	if !errors.Is(err, kafkaclient.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	if took < policy.GiveUpAfter || took > 5*time.Second {
		t.Errorf("gave up after %s, want about %s", took, policy.GiveUpAfter)
	}
	for _, want := range []string{"kafka " + addr + ": no broker answered", "attempts in"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "within") {
		t.Errorf("%q: a refused connection is not a timeout", err)
	}
	msgs, levels := tap.retries()
	if len(msgs) == 0 {
		t.Fatal("no retry records: it did not retry")
	}
	for i := range msgs {
		if levels[i] != slog.LevelDebug {
			t.Errorf("%s %q: a one-shot command's retries are debug", levels[i], msgs[i])
		}
	}
	if kafkaclient.OneShot().GiveUpAfter > 5*time.Second {
		t.Errorf("OneShot waits %s: not a few seconds", kafkaclient.OneShot().GiveUpAfter)
	}
}

// TestWaitReachableFailsFastOnSecurityErrors: a wrong password is not
// retried, even by a long-running command.
func TestWaitReachableFailsFastOnSecurityErrors(t *testing.T) {
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", Users: []broker.User{{Name: "alice", Password: kafkaclient.NewSecret(password)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	c := kafkaclient.Config{Brokers: []string{b.Addr()}, SASL: kafkaclient.SASLConfig{Mechanism: "scram-sha-256", Username: "alice",
		Password: kafkaclient.NewSecret("wrong-" + password)}}
	tap := &logTap{}
	start := time.Now()
	err = kafkaclient.WaitReachable(t.Context(), c, slog.New(tap), kafkaclient.UntilReachable())
	if !errors.Is(err, kafkaclient.ErrAuthentication) {
		t.Fatalf("err = %v, want ErrAuthentication", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s: not fast", took)
	}
	if msgs, _ := tap.retries(); len(msgs) != 0 {
		t.Errorf("retried a wrong password: %q", msgs)
	}
}

// TestWaitReachableStopsWithTheContext: a signal ends the wait with the
// context's error.
func TestWaitReachableStopsWithTheContext(t *testing.T) {
	addr := refusingAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	tap := &logTap{records: make(chan slog.Record, 1)}
	done := make(chan error, 1)
	go func() {
		done <- kafkaclient.WaitReachable(ctx, kafkaclient.Config{Brokers: []string{addr}}, slog.New(tap), kafkaclient.UntilReachable())
	}()
	<-tap.records // the first retry
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v, want context.Canceled naming %s", err, addr)
	}
}
