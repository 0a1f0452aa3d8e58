// SPDX-License-Identifier: Apache-2.0

package dlq_test

import (
	"strings"
	"testing"

	dltest "github.com/kretrieve/kretrieve/deadletters/deadletterstest"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
)

// TestReplayTargetIsTheTopologys: a letter of X.dlq is replayed to X, never
// to the topic its original-topic header names: a letter in the requests'
// dead-letter topic whose header names the results topic (which the
// retrieval role cannot write to) is refused and committed past.
func TestReplayTargetIsTheTopologys(t *testing.T) {
	e := newEnv(t, 1)
	results := messages.DefaultResultsTopic
	e.produce(
		dltest.Letter{Key: "forged", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: results}.Record(requestsDLQ),
		dltest.Letter{Key: "ok", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ),
	)
	res, err := e.replay(dlq.ReplayConfig{})
	if err == nil || !strings.Contains(err.Error(), `"`+results+`"`) || res.Failed != 1 || res.Replayed != 1 || replayedKeys(res) != "ok" {
		t.Fatalf("replay = %+v, %v; want the forged letter refused, ok replayed", res, err)
	}
	if out := e.readAll(results); len(out) != 0 {
		t.Fatalf("replayed into %s: %q", results, keys(out))
	}
	if out := e.readAll(requests); len(out) != 1 || string(out[0].Key) != "ok" {
		t.Fatalf("republished to %s: %q, want ok", requests, keys(out))
	}
	if c := e.committed(dlq.DefaultReplayGroup, requestsDLQ); c[0] != 2 {
		t.Fatalf("committed %v, want 2: a refused letter does not block its partition", c)
	}
}

// TestReplayOnlyDeadLetterTopicsOfTargets: a dead-letter topic that is not
// X.dlq of a target topic is not replayed at all.
func TestReplayOnlyDeadLetterTopicsOfTargets(t *testing.T) {
	e := newEnv(t, 1)
	e.produce(dltest.Letter{Key: "k", Reason: "x", ErrorType: deadletters.ErrorTypeTransient, OrigTopic: requests}.Record(requestsDLQ))
	_, err := e.replay(dlq.ReplayConfig{Targets: []string{candidates, messages.DefaultResultsTopic}})
	if err == nil || !strings.Contains(err.Error(), requestsDLQ) {
		t.Fatalf("replaying %s with targets candidates and results: %v", requestsDLQ, err)
	}
	if out := e.readAll(requests); len(out) != 0 {
		t.Fatalf("republished %q", keys(out))
	}
}
