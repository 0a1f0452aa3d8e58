// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// closedBy reports whether the broker closes c before the deadline, and
// when: c's read returns an error other than its deadline.
func closedBy(t *testing.T, c net.Conn, deadline time.Time) (bool, time.Time) {
	t.Helper()
	if err := c.SetReadDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	_, err := c.Read(b[:])
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded), time.Now()
}

func startGuarded(t *testing.T, cfg broker.Config) *broker.Broker {
	t.Helper()
	cfg.Listen, cfg.Logger = "127.0.0.1:0", slog.New(slog.DiscardHandler)
	cfg.Users = []broker.User{{Name: "alice", Password: kafkaclient.NewSecret("alice-pw")}}
	b, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestUnauthenticatedConnectionsCapped: beyond the per-host and the total
// cap, a new connection that has not authenticated is closed at once,
// while a client from another host still logs in; logged-in connections
// do not count.
func TestUnauthenticatedConnectionsCapped(t *testing.T) {
	b := startGuarded(t, broker.Config{AuthTimeout: time.Minute, MaxUnauthenticatedPerHost: 2, MaxUnauthenticated: 4})
	alice := plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()
	// Accepted in order: the first two hold their host's slots.
	dialRawFrom(t, "127.0.0.3", b.Addr())
	dialRawFrom(t, "127.0.0.3", b.Addr())
	third := dialRawFrom(t, "127.0.0.3", b.Addr())
	if closed, _ := closedBy(t, third, time.Now().Add(10*time.Second)); !closed {
		t.Fatal("a third silent connection from one host was kept (per-host cap 2)")
	}
	// Logged-in connections free their slot: three in a row from one host.
	for i := range 3 {
		if !loginOn(t, dialRawFrom(t, "127.0.0.2", b.Addr()), b.Addr(), alice) {
			t.Fatalf("login %d from 127.0.0.2 refused", i+1)
		}
	}
	dialRawFrom(t, "127.0.0.4", b.Addr())
	dialRawFrom(t, "127.0.0.4", b.Addr())
	fifth := dialRawFrom(t, "127.0.0.5", b.Addr())
	if closed, _ := closedBy(t, fifth, time.Now().Add(10*time.Second)); !closed {
		t.Fatal("a fifth silent connection was kept (total cap 4)")
	}
}

// TestUnauthenticatedConnectionsTimeOut: a connection that does not
// authenticate in time is closed; one that logged in is not.
func TestUnauthenticatedConnectionsTimeOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	b := startGuarded(t, broker.Config{AuthTimeout: timeout})
	start := time.Now()
	silent := dialRawFrom(t, "127.0.0.6", b.Addr())
	client := dialRawFrom(t, "127.0.0.7", b.Addr())
	if !loginOn(t, client, b.Addr(), plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()) {
		t.Fatal("alice refused")
	}
	closed, at := closedBy(t, silent, time.Now().Add(10*time.Second))
	if !closed {
		t.Fatalf("a silent connection was kept for 10 s (auth timeout %v)", timeout)
	}
	if took := at.Sub(start); took < timeout-50*time.Millisecond {
		t.Errorf("a silent connection was closed after %v, before the auth timeout %v", took, timeout)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	if _, err := client.do(md); err != nil {
		t.Errorf("the logged-in connection was closed after the auth timeout: %v", err)
	}
}
