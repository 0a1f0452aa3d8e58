// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// Kinds of error a test case expects.
const (
	valid      = ""
	decodeErr  = "decode"
	invalidErr = "validation"
)

// ulidRE matches the ids made by NewRequestID.
var ulidRE = regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)

// jstr returns s as a JSON string. s must be valid UTF-8: encoding/json
// would replace invalid bytes.
func jstr(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// checkErr asserts that err is of the wanted kind: nil, a *DecodeError or
// a *ValidationError naming field, in both cases matching ErrInvalid and
// naming payload.
func checkErr(t *testing.T, err error, kind, payload, field string) {
	t.Helper()
	if kind == valid {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("got no error, want a %s error", kind)
	}
	if !errors.Is(err, messages.ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
	switch kind {
	case decodeErr:
		var de *messages.DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
		}
		if de.Payload != payload {
			t.Errorf("Payload = %q, want %q", de.Payload, payload)
		}
		if got := messages.Reason(err); got != messages.ReasonDecodeError {
			t.Errorf("Reason = %q, want %q", got, messages.ReasonDecodeError)
		}
	case invalidErr:
		var ve *messages.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
		}
		if ve.Payload != payload || ve.Field != field {
			t.Errorf("got payload %q field %q (%v), want payload %q field %q", ve.Payload, ve.Field, err, payload, field)
		}
		if ve.Reason == "" {
			t.Error("Reason is empty")
		}
		if got := messages.Reason(err); got != messages.ReasonValidationError {
			t.Errorf("Reason = %q, want %q", got, messages.ReasonValidationError)
		}
	default:
		t.Fatalf("bad kind %q", kind)
	}
}
