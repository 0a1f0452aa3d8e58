// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"errors"
	"strconv"
	"time"
)

// HeaderDeadline names the record header that carries the caller's
// deadline: the time after which nobody waits for the request's outcome.
// Its value is the deadline in Unix milliseconds (UTC), as decimal ASCII
// digits and nothing else ("1767225600000"), so that any producer can
// write it: kcat -H kretrieve-deadline=1767225600000, or kafka-python's
// headers=[("kretrieve-deadline", b"1767225600000")].
//
// producer.Client sets it from its context's deadline (the gateway's
// --timeout, kretrieve produce --wait --timeout); the consumer runtime
// copies it from each input record to the records it produces, and does
// not run its handler for a record it takes past the deadline (the
// outcome is "expired"). [ParseDeadline] gives the rules of a value.
const HeaderDeadline = "kretrieve-deadline"

// Plausibility bounds of a deadline, judged against the reader's clock.
const (
	// MaxDeadlineAge is how far in the past a deadline may lie: an older
	// one is implausible (seconds written as milliseconds, say) and is
	// ignored. A record cannot wait in Kafka that long either (the
	// pathway header's bound, pathway.MaxAge, is the same).
	MaxDeadlineAge = 30 * 24 * time.Hour
	// MaxDeadlineAhead is how far in the future a deadline may lie: a
	// later one is clamped to now + MaxDeadlineAhead. No caller waits
	// that long for an answer.
	MaxDeadlineAhead = time.Hour
	// maxDeadlineDigits is the longest value read: Unix milliseconds
	// have 13 digits until the year 2286; 16 keeps every int64 overflow
	// out of reach.
	maxDeadlineDigits = 16
)

// Errors of ParseDeadline. Each means the header is ignored: the record
// has no deadline.
var (
	ErrDeadlineSyntax = errors.New("deadline: not decimal Unix milliseconds")
	ErrDeadlinePast   = errors.New("deadline: implausibly far in the past")
	ErrDeadlineRepeat = errors.New("deadline: header repeated")
)

// FormatDeadline returns the HeaderDeadline value of t: its Unix
// milliseconds in decimal, rounded down, so that no stage starts work
// after the caller's own deadline (which costs the work less than a
// millisecond of its budget).
func FormatDeadline(t time.Time) string {
	return strconv.FormatInt(t.UnixMilli(), 10)
}

// ParseDeadline parses a HeaderDeadline value read at now. It accepts 1 to
// 16 ASCII digits (no sign, space or fraction) naming a time no more than
// MaxDeadlineAge before now; a time more than MaxDeadlineAhead after now is
// clamped to now + MaxDeadlineAhead (clamped is then true). Anything else
// is an error, and the header is ignored. It never allocates.
func ParseDeadline(v []byte, now time.Time) (deadline time.Time, clamped bool, err error) {
	if len(v) == 0 || len(v) > maxDeadlineDigits {
		return time.Time{}, false, ErrDeadlineSyntax
	}
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return time.Time{}, false, ErrDeadlineSyntax
		}
		ms = ms*10 + int64(c-'0')
	}
	d := time.UnixMilli(ms)
	if d.Before(now.Add(-MaxDeadlineAge)) {
		return time.Time{}, false, ErrDeadlinePast
	}
	if limit := now.Add(MaxDeadlineAhead); d.After(limit) {
		return limit, true, nil
	}
	return d, false, nil
}

// ReadDeadline returns the deadline carried by headers at now: the one
// HeaderDeadline header, by the rules of ParseDeadline; key returns a
// header's key and value (package messages imports no Kafka client). A record with
// several is ignored (ErrDeadlineRepeat), as it is for the pathway
// header: which one the producer meant cannot be told. ok is false when
// there is none or it is ignored (err says why).
func ReadDeadline[H any](headers []H, key func(*H) (string, []byte), now time.Time) (deadline time.Time, clamped, ok bool, err error) {
	var val []byte
	n := 0
	for i := range headers {
		if k, v := key(&headers[i]); k == HeaderDeadline {
			val = v
			n++
		}
	}
	switch {
	case n == 0:
		return time.Time{}, false, false, nil
	case n > 1:
		return time.Time{}, false, false, ErrDeadlineRepeat
	}
	deadline, clamped, err = ParseDeadline(val, now)
	return deadline, clamped, err == nil, err
}
