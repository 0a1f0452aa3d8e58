// SPDX-License-Identifier: Apache-2.0

// Package brokertest starts an in-process Kafka-compatible broker (kfake,
// through broker/) for tests, closed by t.Cleanup.
package brokertest

import (
	"testing"

	"github.com/kretrieve/kretrieve/broker"
)

// NewBroker starts a broker on a free 127.0.0.1 port with the given default
// partition count (0: 6) and returns its address.
func NewBroker(tb testing.TB, partitions int) *broker.Broker {
	tb.Helper()
	// No retention: tests seed records with old timestamps (an hour or
	// more, to measure lag) that the broker's default would delete.
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", DefaultPartitions: partitions, Retention: -1, RetentionBytes: -1})
	if err != nil {
		tb.Fatalf("start broker: %v", err)
	}
	tb.Cleanup(b.Close)
	return b
}
