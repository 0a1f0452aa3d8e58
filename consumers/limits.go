// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Default per-record limits (see Config).
const (
	DefaultMaxRecordBytes     = 1 << 20
	DefaultMaxHeaders         = 64
	DefaultMaxHeaderBytes     = 64 << 10
	DefaultMaxDeadLetterBytes = 1_000_000
)

// Limits bounds what one record may carry. A record beyond a limit is never
// handed to the handler (so it is never decoded): it fails with a permanent
// error and goes to the dead-letter topic. A zero field means no limit.
type Limits struct {
	// MaxRecordBytes caps the record's key plus value, in bytes.
	MaxRecordBytes int
	// MaxHeaders caps the number of headers.
	MaxHeaders int
	// MaxHeaderBytes caps the headers' keys and values together, in bytes.
	MaxHeaderBytes int
}

// Limit returns middleware that fails records beyond l with a permanent
// error, before they reach the next handler. The error names the limit and
// the sizes, never the record's content. DefaultMiddleware places it, with
// the limits of its Config, right inside Recover.
func Limit(l Limits) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, msg *Message) ([]*kgo.Record, error) {
			if err := l.check(msg.Record); err != nil {
				return nil, Permanent(err)
			}
			return next(ctx, msg)
		}
	}
}

// check returns a *limitError for the first limit rec breaks.
func (l Limits) check(rec *kgo.Record) error {
	if n := len(rec.Key) + len(rec.Value); l.MaxRecordBytes > 0 && n > l.MaxRecordBytes {
		return &limitError{what: "record key and value", got: n, max: l.MaxRecordBytes, unit: "bytes"}
	}
	if n := len(rec.Headers); l.MaxHeaders > 0 && n > l.MaxHeaders {
		return &limitError{what: "record headers", got: n, max: l.MaxHeaders, unit: "headers"}
	}
	if n := headerBytes(rec.Headers); l.MaxHeaderBytes > 0 && n > l.MaxHeaderBytes {
		return &limitError{what: "record headers", got: n, max: l.MaxHeaderBytes, unit: "bytes"}
	}
	return nil
}

// limitError reports a record beyond one of the Limits.
type limitError struct {
	what     string
	got, max int
	unit     string
}

// Error returns, for example, "record key and value: 2097152 bytes, over the
// limit of 1048576".
func (e *limitError) Error() string {
	return e.what + ": " + strconv.Itoa(e.got) + " " + e.unit + ", over the limit of " + strconv.Itoa(e.max)
}

func headerBytes(hs []kgo.RecordHeader) int {
	n := 0
	for _, h := range hs {
		n += len(h.Key) + len(h.Value)
	}
	return n
}
