// SPDX-License-Identifier: Apache-2.0

//go:build unix

package dlq_test

import (
	"context"
	"fmt"
	dltest "github.com/kretrieve/kretrieve/deadletters/deadletterstest"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/ops/dlq"
)

// replayChildEnv names the broker a child process replays from.
const replayChildEnv = "KRETRIEVE_TEST_REPLAY_BROKER"

// TestReplayKilledMidwayRepublishesAtMostOneBatch SIGKILLs a replay of
// 10,000 letters in a child process once 1,500 are republished, then
// replays again: every letter is republished, at most CommitEvery (500)
// of them twice. Committing once per poll, a killed replay republished
// every letter of its poll again (about 3,000 here).
func TestReplayKilledMidwayRepublishesAtMostOneBatch(t *testing.T) {
	if addr := os.Getenv(replayChildEnv); addr != "" {
		replayChild(t, addr)
		return
	}
	const letters, killAfter = 10000, 1500
	e := newEnv(t, 1)
	for from := 0; from < letters; from += 5000 {
		recs := make([]*kgo.Record, 5000)
		for i := range recs {
			recs[i] = dltest.Letter{Key: fmt.Sprintf("req-%05d", from+i), Reason: "search: index closed", ErrorType: deadletters.ErrorTypeTransient,
				OrigTopic: requests, OrigOffset: int64(from + i), Attempts: 3}.Record(requestsDLQ)
		}
		e.produce(recs...)
	}

	child := exec.Command(os.Args[0], "-test.run=^TestReplayKilledMidwayRepublishesAtMostOneBatch$", "-test.count=1")
	child.Env = append(os.Environ(), replayChildEnv+"="+e.addr)
	child.Stdout, child.Stderr = io.Discard, io.Discard
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	republished := func() int64 {
		ends, err := e.adm.ListEndOffsets(t.Context(), requests)
		if err != nil {
			return 0
		}
		var n int64
		ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
		return n
	}
	reached := poll.Wait(60*time.Second, func() bool { return republished() >= killAfter })
	_ = child.Process.Signal(syscall.SIGKILL)
	_ = child.Wait()
	if !reached {
		t.Fatalf("the child republished %d letters in 60 s", republished())
	}
	atKill := republished()
	if atKill >= letters {
		t.Fatalf("the replay finished (%d republished) before it was killed", atKill)
	}

	res := e.mustReplay(dlq.ReplayConfig{})
	total := republished()
	t.Logf("killed after %d republished; the rerun republished %d; %d duplicates", atKill, res.Replayed, total-letters)
	if total < letters {
		t.Fatalf("%d republished in all: %d letters lost", total, letters-total)
	}
	if dup := total - letters; dup > dlq.DefaultReplayCommitEvery {
		t.Errorf("%d letters republished twice, more than one commit interval (%d)", dup, dlq.DefaultReplayCommitEvery)
	}
}

// replayChild replays every letter of the requests' dead-letter topic from
// the broker at addr, until its parent kills it.
func replayChild(t *testing.T, addr string) {
	// One record in flight at a time: a poll of thousands of letters takes
	// long enough for the parent's kill to land inside it.
	opts := append(kafkaclient.Options(kafkaclient.Config{Brokers: []string{addr}, ClientID: "replay-child"}, slog.New(slog.DiscardHandler), nil),
		kgo.MaxBufferedRecords(1))
	_, err := dlq.Replay(context.Background(), opts, kafkatrace.New(), dlq.ReplayConfig{Topics: []string{requestsDLQ}},
		dlq.WithLogger(slog.New(slog.DiscardHandler)))
	t.Logf("replay ended: %v", err)
}
