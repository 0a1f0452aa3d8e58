// SPDX-License-Identifier: Apache-2.0

package producer

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
)

// TestCloseIsBoundedWhenTheBrokerIsGone: Close gives up on requests that
// cannot be acknowledged after CloseTimeout, says so, and returns; it does
// not flush forever (a load or gateway stopping with its broker gone ran on
// after SIGTERM). The broker here accepts connections and never answers.
func TestCloseIsBoundedWhenTheBrokerIsGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never read
		}
	}()
	client, err := kgo.NewClient(kgo.SeedBrokers(ln.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPublisher(client, messages.DefaultRequestsTopic)
	acked := make(chan error, 1)
	if err := p.Publish(t.Context(), messages.Request{RequestID: "r1", Query: "gzip", TopK: 10}, func(_ Receipt, err error) { acked <- err }); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close(context.Background()) }()
	select {
	case err := <-closed:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not acknowledged") {
			t.Errorf("Close: %v, want the deadline, explained", err)
		}
	case <-time.After(CloseTimeout + 30*time.Second):
		t.Fatalf("Close still flushing %v after it began", CloseTimeout+30*time.Second)
	}
	if err := <-acked; err == nil {
		t.Error("the unacknowledged request was not failed")
	}
}
