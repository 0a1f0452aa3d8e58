// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestApplyRewindsRacesNoRequest: the poll loop's applyRewinds and the
// partitions' requestRewind share the rewinds map only under the Worker's
// lock. applyRewinds once read the map's length after unlocking it when it
// had found it empty, while a partition could be writing to that very map
// (a data race CI's -race run caught in TestRefusedOutputsRewindWithBackoff;
// ranging over it then could crash the worker). Under -race this test fails
// on that code; without -race it checks that every rewind asked for is
// applied once.
func TestApplyRewindsRacesNoRequest(t *testing.T) {
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1")) // never dialled: SetOffsets on a client that consumes nothing does nothing
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	w := &Worker{client: cl, parts: make(map[partKey]*partition), rewinds: make(map[partKey]int64)}
	const n = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			w.requestRewind(&partition{key: partKey{"t", int32(i)}}, int64(i))
		}
	}()
	applied := map[partKey]int64{}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		for k, off := range w.applyRewinds() {
			if _, twice := applied[k]; twice {
				t.Fatalf("rewind of %v applied twice", k)
			}
			applied[k] = off
		}
	}
	for k, off := range w.applyRewinds() {
		applied[k] = off
	}
	if len(applied) != n {
		t.Fatalf("%d rewinds applied, want %d", len(applied), n)
	}
	for k, off := range applied {
		if off != int64(k.partition) {
			t.Fatalf("rewind of %v to %d, want %d", k, off, k.partition)
		}
	}
}
