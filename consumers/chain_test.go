// SPDX-License-Identifier: Apache-2.0

package consumers_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/consumers"
)

// outcomeRecorder is a middleware that records, per record key, the
// outcome the handler it wraps returned.
type outcomeRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *outcomeRecorder) middleware(next consumers.Handler) consumers.Handler {
	return func(ctx context.Context, msg *consumers.Message) ([]*kgo.Record, error) {
		outs, err := next(ctx, msg)
		outcome := "outputs"
		if dle := (*consumers.DeadLetterError)(nil); errors.As(err, &dle) {
			outcome = "dead letter"
		} else if err != nil {
			outcome = "error"
		}
		r.mu.Lock()
		r.seen = append(r.seen, string(msg.Record.Key)+": "+outcome)
		r.mu.Unlock()
		return outs, err
	}
}

func (r *outcomeRecorder) saw(want string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.seen, want)
}

// TestWithChainIsUsed gives the Worker its chain with WithChain: the
// default one plus a recording middleware, placed outermost or innermost.
// Each record runs through that chain in that order: outermost, the
// recorder sees the dead-letter outcome DeadLetter made of a poison
// record's error; innermost, it sees the error itself. Either way the
// runtime publishes the good record's output and the poison record's dead
// letter, and commits both.
func TestWithChainIsUsed(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		outermost bool
		poison    string // what the recorder sees of the poison record
	}{
		{"outermost", "chain.outer", true, "poison: dead letter"},
		{"innermost", "chain.inner", false, "poison: error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &outcomeRecorder{}
			chain := consumers.DefaultMiddleware(hostileConfig(tc.in))
			if tc.outermost {
				chain = append([]consumers.Middleware{rec.middleware}, chain...)
			} else {
				chain = append(chain, rec.middleware)
			}
			e := newHostileEnv(t, tc.in, "", consumers.WithChain(chain...))
			e.produce(&kgo.Record{Key: []byte("poison"), Value: []byte("not json")},
				&kgo.Record{Key: []byte("good"), Value: []byte(`{"query":"gzip"}`)})
			if out := e.read(tc.in+".out", 1); string(out["good"].Value) != "good" {
				t.Fatalf("output %q", out["good"].Value)
			}
			e.read(tc.in+".dlq", 1)
			e.waitCommitted(2)
			if !rec.saw("good: outputs") || !rec.saw(tc.poison) || rec.saw("poison: outputs") {
				t.Fatalf("the recorder saw %v, want %q and %q", rec.seen, "good: outputs", tc.poison)
			}
		})
	}
}

// TestDefaults: DefaultConfig holds the exported defaults, a zero Config
// and a zero RetryConfig take them, and DefaultMiddleware's Retry follows
// the Config's Attempts.
func TestDefaults(t *testing.T) {
	d := consumers.DefaultConfig()
	if d.Concurrency != consumers.DefaultConcurrency || d.MaxPollRecords != consumers.DefaultMaxPollRecords ||
		d.Attempts != consumers.DefaultAttempts || d.RetryBackoff != consumers.DefaultRetryBackoff ||
		d.CommitTimeout != consumers.DefaultCommitTimeout || d.FetchMaxBytes != consumers.DefaultFetchMaxBytes ||
		d.SessionTimeout != consumers.DefaultSessionTimeout || d.MaxDeadLetterBytes != consumers.DefaultMaxDeadLetterBytes {
		t.Fatalf("DefaultConfig() = %+v", d)
	}
	calls := 0
	failing := func(context.Context, *consumers.Message) ([]*kgo.Record, error) {
		calls++
		return nil, errors.New("down")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := consumers.Chain(failing, consumers.DefaultMiddleware(consumers.Config{Group: "g", Topic: "t", Attempts: 2})...)
	_, err := h(ctx, &consumers.Message{Record: &kgo.Record{Topic: "t"}, Attempt: 1})
	if dle := (*consumers.DeadLetterError)(nil); !errors.As(err, &dle) || calls != 2 || dle.Attempts != 2 {
		t.Fatalf("err %v after %d calls, want a dead letter after 2 attempts", err, calls)
	}
}
