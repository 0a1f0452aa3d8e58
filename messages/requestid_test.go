// SPDX-License-Identifier: Apache-2.0

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

func TestIsGeneratedRequestID(t *testing.T) {
	for range 100 {
		if id := messages.NewRequestID(); !messages.IsGeneratedRequestID(id) {
			t.Fatalf("NewRequestID() = %q is not recognised", id)
		}
	}
	for _, id := range []string{"", "async-1", "alice@example.com", "01JDQ3Z7W8X2K4M6N8P0R2T4V", "81JDQ3Z7W8X2K4M6N8P0R2T4V6", "01JDQ3Z7W8X2K4M6N8P0R2T4VU", "01jdq3z7w8x2k4m6n8p0r2t4v6"} {
		if messages.IsGeneratedRequestID(id) {
			t.Errorf("IsGeneratedRequestID(%q) = true", id)
		}
	}
}
