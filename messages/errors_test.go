// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

func TestErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantText   string
		wantReason string
		invalid    bool
	}{
		{
			name:       "decode",
			err:        &messages.DecodeError{Payload: "request", Err: io.ErrUnexpectedEOF},
			wantText:   "decode request: unexpected EOF",
			wantReason: messages.ReasonDecodeError,
			invalid:    true,
		},
		{
			name:       "validation",
			err:        &messages.ValidationError{Payload: "request", Field: "top_k", Reason: "must be between 1 and 100"},
			wantText:   "invalid request: top_k: must be between 1 and 100",
			wantReason: messages.ReasonValidationError,
			invalid:    true,
		},
		{
			name:       "validation without field",
			err:        &messages.ValidationError{Payload: "result", Reason: "bad"},
			wantText:   "invalid result: bad",
			wantReason: messages.ReasonValidationError,
			invalid:    true,
		},
		{
			name:       "wrapped validation",
			err:        fmt.Errorf("handle record: %w", &messages.ValidationError{Payload: "candidates", Field: "query", Reason: "required"}),
			wantText:   "handle record: invalid candidates: query: required",
			wantReason: messages.ReasonValidationError,
			invalid:    true,
		},
		{name: "other", err: errors.New("broker down"), wantText: "broker down"},
		{name: "ErrInvalid itself", err: messages.ErrInvalid, wantText: "invalid message", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.wantText {
				t.Errorf("Error() = %q, want %q", got, tt.wantText)
			}
			if got := messages.Reason(tt.err); got != tt.wantReason {
				t.Errorf("Reason = %q, want %q", got, tt.wantReason)
			}
			if got := errors.Is(tt.err, messages.ErrInvalid); got != tt.invalid {
				t.Errorf("errors.Is(err, ErrInvalid) = %v, want %v", got, tt.invalid)
			}
		})
	}
	if got := messages.Reason(nil); got != "" {
		t.Errorf("Reason(nil) = %q", got)
	}
}

func TestDecodeErrorUnwraps(t *testing.T) {
	_, err := messages.DecodeRequest([]byte(`{"query":`))
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		t.Fatalf("error %v does not wrap a *json.SyntaxError", err)
	}
	if !errors.Is(err, messages.ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
}

// TestErrorTextsDoNotQuoteTheValue checks that no decode or validation
// error quotes the record value, not even one character of it: error texts
// go to spans, logs and dead-letter headers, and record values are user data.
func TestErrorTextsDoNotQuoteTheValue(t *testing.T) {
	const canary = "Ωcanary7f3a"
	bodies := []string{
		canary,
		`{"query":"x"} ` + canary,
		`{"query":"x",` + canary + `}`,
		`{"query":` + canary + `}`,
		`{"query" ` + canary + `}`,
		`{"query":"` + canary + `"`,
		`{"query":"` + canary + "\x01" + `"}`,
		`{"query":"` + canary + `\q"}`,
		`{"query":"` + canary + `","top_k":` + canary + `}`,
		`{"query":"` + canary + `","top_k":"` + canary + `"}`,
		`{"query":"` + canary + `","top_k":1000}`,
		`{"query":"` + canary + "\xff" + `"}`,
		`{"query":"x","` + canary + "\xff" + `":"` + canary + `"}`,
		`{"query":"x","request_id":" ` + canary + `"}`,
		`{"request_id":"` + canary + `","query":"` + canary + `","top_k":1,"candidates":[{"doc_id":"` + canary + `","score":"` + canary + `"}]}`,
		`{"request_id":"` + canary + `","documents":[{"id":"` + canary + `","title":` + canary + `}]}`,
		`{"request_id":"` + canary + `","documents":[{"id":"` + canary + `","title":"t","score":1,"snippet":"` + canary + "\xff" + `"}]}`,
	}
	decoders := map[string]func([]byte) error{
		"request":    func(b []byte) error { _, err := messages.DecodeRequestKeyed(b, []byte(canary)); return err },
		"candidates": func(b []byte) error { _, err := messages.DecodeCandidates(b); return err },
		"result":     func(b []byte) error { _, err := messages.DecodeResult(b); return err },
	}
	for name, decode := range decoders {
		for _, body := range bodies {
			err := decode([]byte(body))
			if err == nil {
				continue
			}
			if msg := err.Error(); strings.Contains(msg, "canary") || strings.ContainsRune(msg, 'Ω') || strings.Contains(msg, "'") {
				t.Errorf("%s: decoding %q: error %q quotes the value", name, body, msg)
			}
		}
	}
}

func TestInvalidUTF8IsTyped(t *testing.T) {
	for _, body := range []string{
		"{\"query\":\"\xff\"}",                 // a field: *ValidationError
		"{\"query\":\"x\",\"extra\":\"\xff\"}", // an ignored member: *DecodeError
		"{\"query\":\"x\",\"\xc3\":[1]}",       // a member name
		"{\"query\":\"x\",\"a\":{\"b\":\"\xe2\x82\"}}",
	} {
		_, err := messages.DecodeRequest([]byte(body))
		if !errors.Is(err, messages.ErrInvalidUTF8) || !errors.Is(err, messages.ErrInvalid) {
			t.Errorf("DecodeRequest(%q) = %v, want an error matching ErrInvalidUTF8 and ErrInvalid", body, err)
		}
	}
	if _, err := messages.DecodeRequest([]byte(`{"query":"x","top_k":0}`)); errors.Is(err, messages.ErrInvalidUTF8) {
		t.Errorf("a top_k error matches ErrInvalidUTF8: %v", err)
	}
}
