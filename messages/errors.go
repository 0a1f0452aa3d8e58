// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// ErrInvalid is matched by errors.Is for every [*DecodeError] and
// [*ValidationError]: the record can never be processed and belongs on a
// dead-letter topic.
var ErrInvalid = errors.New("invalid message")

// ErrInvalidUTF8 is matched by errors.Is for every error about bytes that
// are not valid UTF-8: a [*ValidationError] for a string field that is not
// (such as "query: must be valid utf-8"), and a [*DecodeError] for invalid
// UTF-8 anywhere else in a record value, such as in a member name or in the
// value of a member this package ignores.
var ErrInvalidUTF8 = errors.New("invalid utf-8")

// Values returned by [Reason].
const (
	ReasonDecodeError     = "decode_error"
	ReasonValidationError = "validation_error"
)

// DecodeError reports a record value that is not a single JSON object of
// valid UTF-8.
type DecodeError struct {
	// Payload is PayloadRequest, PayloadCandidates or PayloadResult, or
	// "" for an error of [Timings.UnmarshalJSON].
	Payload string
	// Err is the underlying error, such as a *json.SyntaxError or an error
	// matching [ErrInvalidUTF8].
	Err error
}

// Error returns, for example, "decode request: unexpected end of JSON input"
// or "decode request: invalid json at byte 15".
//
// The text never quotes the record value: it ends up in spans, logs and
// dead-letter headers, and record values are user data. A *json.SyntaxError
// (whose own text quotes the offending character) is described by its byte
// offset only; Unwrap still returns it.
func (e *DecodeError) Error() string {
	if e.Err == nil {
		return "decode " + payloadName(e.Payload)
	}
	return "decode " + payloadName(e.Payload) + ": " + describe(e.Err)
}

// describe returns err's text, except for JSON syntax errors, which are
// described without quoting the input.
func describe(err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	if strings.HasPrefix(se.Error(), "unexpected end of JSON input") {
		return "unexpected end of JSON input"
	}
	return "invalid json at byte " + strconv.FormatInt(se.Offset, 10)
}

// Unwrap returns e.Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrInvalid].
func (e *DecodeError) Is(target error) bool { return target == ErrInvalid }

// ValidationError reports a payload field that is missing, has the wrong
// JSON type or breaks a rule.
type ValidationError struct {
	// Payload is PayloadRequest, PayloadCandidates or PayloadResult, or
	// "" for an error of [Timings.UnmarshalJSON].
	Payload string
	// Field is the JSON name of the field, with a path for nested fields,
	// such as "top_k", "candidates[3].score" or "timings.stages[2].queue_ms".
	Field string
	// Reason is a short description such as "must be between 1 and 100".
	Reason string
}

// Error returns, for example, "invalid request: top_k: must be between 1 and 100".
func (e *ValidationError) Error() string {
	s := "invalid " + payloadName(e.Payload) + ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Reason
}

// Is reports whether target is [ErrInvalid], or [ErrInvalidUTF8] when the
// field is not valid UTF-8.
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (target == ErrInvalidUTF8 && e.Reason == reasonUTF8)
}

// utf8Error locates the first byte of a record value that is not valid UTF-8.
type utf8Error struct{ offset int }

func (e *utf8Error) Error() string { return "invalid utf-8 at byte " + strconv.Itoa(e.offset) }

// Is reports whether target is [ErrInvalidUTF8].
func (e *utf8Error) Is(target error) bool { return target == ErrInvalidUTF8 }

// Reason classifies err for metric attributes, log fields and dead-letter
// headers: [ReasonDecodeError] when err wraps a [*DecodeError],
// [ReasonValidationError] when it wraps a [*ValidationError], and "" for
// any other error, including nil.
func Reason(err error) string {
	var de *DecodeError
	if errors.As(err, &de) {
		return ReasonDecodeError
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ReasonValidationError
	}
	return ""
}

func payloadName(p string) string {
	if p == "" {
		return "message"
	}
	return p
}
