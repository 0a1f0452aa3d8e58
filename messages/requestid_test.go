package messages_test

import (
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

func TestNewRequestID(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := messages.NewRequestID()
		if !ulidRE.MatchString(id) {
			t.Fatalf("id %q is not a 26-character ULID", id)
		}
		if err := (messages.Request{RequestID: id, Query: "q", TopK: 1}).Validate(); err != nil {
			t.Fatalf("generated id %q fails validation: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("id %q generated twice", id)
		}
		seen[id] = true
	}
}
