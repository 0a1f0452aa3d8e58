// SPDX-License-Identifier: Apache-2.0

package consumers

// Middleware wraps a Handler with a cross-cutting concern. It passes the
// outcome of the handler it wraps (outputs, or an error) back out, changed
// or not; it never publishes or commits: the runtime does, with the
// outcome the whole chain returns.
type Middleware func(Handler) Handler

// Chain wraps h so that the first middleware is the outermost.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// DefaultMiddleware returns the chain a Worker for cfg runs each record
// through unless WithChain replaces it, outermost first:
//
//  1. DeadLetter turns a failure into a dead-letter outcome: the record's
//     dead letter (cut to cfg.MaxDeadLetterBytes, naming cfg.Group), which
//     the runtime publishes in place of outputs. Its filter is the
//     runtime's: a record whose handler a stop cancelled is not
//     dead-lettered but left uncommitted, for redelivery.
//  2. Recover turns a panic into a permanent error.
//  3. Limit fails a record beyond cfg's Limits (MaxRecordBytes,
//     MaxHeaders, MaxHeaderBytes) before anything decodes it.
//  4. Retry retries transient errors: cfg.Attempts in all, from
//     cfg.RetryBackoff up to DefaultMaxRetryBackoff.
//
// The middleware added with WithMiddleware runs inside these, around the
// handler. The whole chain runs inside the record's process span, which the
// runtime starts before it and ends after publishing the chain's outcome
// (see Trace). cfg's zero fields take their defaults.
func DefaultMiddleware(cfg Config) []Middleware {
	cfg = cfg.withDefaults()
	return []Middleware{
		DeadLetter(DeadLetterConfig{Group: cfg.Group, MaxBytes: cfg.MaxDeadLetterBytes, Filter: notStopped}),
		Recover(),
		Limit(cfg.limits()),
		Retry(RetryConfig{Attempts: cfg.Attempts, MinBackoff: cfg.RetryBackoff}),
	}
}
