// SPDX-License-Identifier: Apache-2.0

package console

import (
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/topology"
)

// TestNilOptionIsIgnored: a nil Option is skipped (docs/ARCHITECTURE.md,
// "Options"), the others apply.
func TestNilOptionIsIgnored(t *testing.T) {
	l := slog.New(slog.DiscardHandler)
	cfg := Config{Topology: topology.Default(messages.DefaultTopics()), KafkaOptions: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}}
	con, err := New(cfg, nil, WithLogger(l), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	if con.collab.logger != l {
		t.Error("the option after a nil one was not applied")
	}
}
