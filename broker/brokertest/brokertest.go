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
	b, err := broker.Start(Config(partitions))
	if err != nil {
		tb.Fatalf("start broker: %v", err)
	}
	tb.Cleanup(b.Close)
	return b
}

// Config is the configuration NewBroker starts its broker with: a free
// 127.0.0.1 port, the given default partition count (0: 6) and no
// retention (tests seed records with old timestamps, an hour or more, to
// measure lag, which the broker's default would delete). A test that runs
// its broker in another process starts it with the same.
func Config(partitions int) broker.Config {
	return broker.Config{Listen: "127.0.0.1:0", DefaultPartitions: partitions, Retention: -1, RetentionBytes: -1}
}
