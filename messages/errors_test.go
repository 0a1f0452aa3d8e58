package messages_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
