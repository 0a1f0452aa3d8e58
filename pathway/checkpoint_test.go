// SPDX-License-Identifier: Apache-2.0

package pathway

import "testing"

func TestCheckpointIdentityCoversEveryField(t *testing.T) {
	base := Checkpoint{Service: "kretrieve-retrieval", Group: "retrieval", Topic: "retrieval.requests", Direction: In}
	variants := []Checkpoint{
		{Service: "kretrieve-enrichment", Group: base.Group, Topic: base.Topic, Direction: In},
		{Service: base.Service, Group: "other", Topic: base.Topic, Direction: In},
		{Service: base.Service, Group: base.Group, Topic: "retrieval.candidates", Direction: In},
		{Service: base.Service, Group: base.Group, Topic: base.Topic, Direction: Out},
		// The separator keeps field boundaries apart.
		{Service: "kretrieve-retrievalretrieval", Group: "", Topic: base.Topic, Direction: In},
	}
	seen := map[uint64]Checkpoint{base.ID(): base}
	for _, v := range variants {
		if prev, dup := seen[v.ID()]; dup {
			t.Errorf("%+v and %+v share an identity", v, prev)
		}
		seen[v.ID()] = v
	}
	if base.ID() != (Checkpoint{Service: "kretrieve-retrieval", Group: "retrieval", Topic: "retrieval.requests", Direction: In}).ID() {
		t.Error("ID is not deterministic")
	}
}

func TestChainAndNext(t *testing.T) {
	out := Checkpoint{Service: "gw", Topic: "req", Direction: Out}.ID()
	in := Checkpoint{Service: "w", Group: "g", Topic: "req", Direction: In}.ID()
	first := Next(Context{}, out, 100)
	if first.Hash != Chain(0, out) || first.Origin != 100 || first.Prev != 100 {
		t.Fatalf("new pathway %+v", first)
	}
	second := Next(first, in, 250)
	if second.Hash != Chain(first.Hash, in) || second.Origin != 100 || second.Prev != 250 {
		t.Fatalf("continued pathway %+v", second)
	}
	// The order of checkpoints matters.
	if Chain(Chain(0, in), out) == second.Hash {
		t.Error("chain is order-independent")
	}
	if Chain(0, 0) == 0 {
		t.Error("Chain returned 0")
	}
}

func TestEdgeAndHashString(t *testing.T) {
	for _, c := range []struct {
		cp   Checkpoint
		want string
	}{
		{Checkpoint{Service: "s", Group: "retrieval", Topic: "retrieval.requests", Direction: In}, "retrieval.requests → retrieval"},
		{Checkpoint{Service: "kretrieve-gateway", Topic: "retrieval.results", Direction: In}, "retrieval.results → kretrieve-gateway"},
		{Checkpoint{Service: "s", Group: "retrieval", Topic: "retrieval.candidates", Direction: Out}, "retrieval → retrieval.candidates"},
		{Checkpoint{Service: "kretrieve-gateway", Topic: "retrieval.requests", Direction: Out}, "kretrieve-gateway → retrieval.requests"},
		{Checkpoint{Service: "s", Group: "enrichment", Topic: "retrieval.candidates", Direction: Expired}, "retrieval.candidates → enrichment (expired)"},
	} {
		if got := c.cp.Edge(); got != c.want {
			t.Errorf("Edge() = %q, want %q", got, c.want)
		}
	}
	if got := HashString(0xabc); got != "0000000000000abc" {
		t.Errorf("HashString = %q", got)
	}
	if In.String() != "in" || Out.String() != "out" || Expired.String() != "expired" {
		t.Error("direction names")
	}
}
