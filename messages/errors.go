package messages

import "errors"

// ErrInvalid is matched by errors.Is for every [*DecodeError] and
// [*ValidationError]: the record can never be processed and belongs on a
// dead-letter topic.
var ErrInvalid = errors.New("invalid message")

// Values returned by [Reason].
const (
	ReasonDecodeError     = "decode_error"
	ReasonValidationError = "validation_error"
)

// DecodeError reports a record value that is not a single JSON object.
type DecodeError struct {
	// Payload is PayloadRequest, PayloadCandidates or PayloadResult.
	Payload string
	// Err is the underlying error, such as a *json.SyntaxError.
	Err error
}

// Error returns, for example, "decode request: unexpected end of JSON input".
func (e *DecodeError) Error() string {
	if e.Err == nil {
		return "decode " + payloadName(e.Payload)
	}
	return "decode " + payloadName(e.Payload) + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrInvalid].
func (e *DecodeError) Is(target error) bool { return target == ErrInvalid }

// ValidationError reports a payload field that is missing, has the wrong
// JSON type or breaks a rule.
type ValidationError struct {
	// Payload is PayloadRequest, PayloadCandidates or PayloadResult.
	Payload string
	// Field is the JSON name of the field, with a path for nested fields,
	// such as "top_k", "candidates[3].score" or "timings.retrieval_ms".
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

// Is reports whether target is [ErrInvalid].
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

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
