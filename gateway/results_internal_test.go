// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/results"
)

// outcomeOf is a result of n documents with snippets of 1000 bytes.
func outcomeOf(id string, n int) results.Outcome {
	docs := make([]messages.Document, n)
	for i := range docs {
		docs[i] = messages.Document{ID: "doc", Title: "title", Score: 1, Snippet: strings.Repeat("s", 1000)}
	}
	return results.Outcome{RequestID: id, Result: messages.Result{RequestID: id, Documents: docs}}
}

// The bytes held stay under MaxResultBytes, counted exactly as the
// answers' encoded sizes plus the estimate per entry: a result that does
// not fit evicts the oldest, then itself; evicted ids read as evicted for
// their owner only; expiry gives every byte back.
func TestResultStoreBoundsBytes(t *testing.T) {
	const maxBytes = 10_000
	s := newResultStore(time.Hour, 100, maxBytes)
	a, b := s.add("owner"), s.add("owner")
	pending := s.bytes
	if pending != 2*int64(heldOverhead+resultIDLen+len("owner")) {
		t.Fatalf("two pending entries count %d bytes", pending)
	}
	s.complete(a, outcomeOf("a", 4)) // about 4.3 kB
	sizeA := s.bytes - pending/2
	s.complete(b, outcomeOf("b", 4))
	if _, st := s.get(a, "owner"); st != stateDone || s.bytes != 2*sizeA || s.bytes > maxBytes {
		t.Fatalf("a: state %d, bytes %d (a alone %d)", st, s.bytes, sizeA)
	}
	c := s.add("owner")
	s.complete(c, outcomeOf("c", 4)) // three do not fit: a goes
	if _, st := s.get(a, "owner"); st != stateEvicted || s.bytes > maxBytes || s.order.Len() != 2 {
		t.Fatalf("a: state %d, bytes %d, held %d", st, s.bytes, s.order.Len())
	}
	if _, st := s.get(a, "someone else"); st != stateUnknown {
		t.Fatalf("another owner sees a's state %d", st)
	}
	d := s.add("owner")
	s.complete(d, outcomeOf("d", 20)) // over the bound alone: evicts all, then itself
	if _, st := s.get(d, "owner"); st != stateEvicted || s.bytes != 0 || s.order.Len() != 0 {
		t.Fatalf("d: state %d, bytes %d, held %d", st, s.bytes, s.order.Len())
	}
	s.retention = 0 // what is added now expires at once
	e := s.add("owner")
	if _, st := s.get(e, "owner"); st != stateUnknown || s.bytes != 0 {
		t.Fatalf("expired: state %d, bytes %d", st, s.bytes)
	}
}

// Evicted ids are remembered at most MaxResults times.
func TestResultStoreBoundsTombstones(t *testing.T) {
	s := newResultStore(time.Hour, 3, 1<<30)
	for range 10 {
		s.add("")
	}
	if s.order.Len() != 3 || len(s.evicted) != 3 || s.tombs.Len() != 3 {
		t.Fatalf("held %d, tombstones %d/%d", s.order.Len(), len(s.evicted), s.tombs.Len())
	}
}
