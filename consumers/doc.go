// SPDX-License-Identifier: Apache-2.0

// Package consumers is kretrieve's consumer-group runtime: it polls records,
// runs each through a Handler wrapped in a chain of Middleware, publishes
// the outcome the chain returns, and commits input offsets only after that
// outcome is acknowledged (at-least-once).
//
// A record's way through the runtime, and the file that holds each step:
//
//  1. poll (worker.go): Run polls the group's records and dispatches them
//     to their partitions, applying the rewinds the partitions asked for.
//  2. queue (queue.go): each assigned partition has a goroutine and a
//     bounded queue: records of a partition are processed in order,
//     partitions in parallel (Concurrency), so a slow partition delays only
//     itself, and a partition whose queue is full stops being fetched, so
//     under a backlog every partition drains from the start.
//  3. chain (chain.go): the record runs through the chain inside its
//     process span (trace.go). DefaultMiddleware gives the chain and its
//     order; WithChain replaces it and WithMiddleware adds to it. Each
//     concern has a file of its own: DeadLetter (deadletter.go, with the
//     dead letter built by package deadletters), Recover (handler.go),
//     Limit (limits.go), Retry (retry.go).
//  4. outcome (outcome.go): the chain returns its outcome: output records,
//     or a *DeadLetterError carrying the error that caused it and the dead
//     letter. Any other error leaves the record uncommitted: its partition
//     rewinds to it and it is processed again. The chain never calls back
//     into the runtime.
//  5. publish (publish.go): the runtime alone produces the outputs, or the
//     dead letter (sent without the original value and headers when the
//     broker refuses it as too large), and counts their acknowledgements.
//     An output not acknowledged fails its input, which is redelivered.
//  6. commit (commit.go): the offset past the records whose outcome is all
//     acknowledged is committed every 100 ms, or sooner under load, and at
//     a stop; rebalance.go commits a revoked partition before it is given
//     away and drops a lost one.
//
// A change to the dead-letter policy touches deadletter.go (when a record
// is dead-lettered and what its dead letter holds) and publish.go (how the
// runtime sends and logs it).
//
// Hostile records cannot stop a worker: a record beyond the Limits (size,
// header count, header bytes) is dead-lettered before anything decodes it,
// a panic is recovered, and a dead letter too large for the broker is sent
// truncated, marked as such, rather than dropped.
//
// No user data in telemetry: error texts go to spans, logs and dead-letter
// reasons, so kretrieve's own errors never quote record contents, and
// handlers pass errors of calls given user data through RedactError.
//
// The retrieval and enrichment workers live in the sub-packages retrieval and
// enrichment. This package does not import producer/.
//
// A Worker's settings are its Config (checked by Config.Validate, its
// defaults exported as Default* constants and DefaultConfig); its required
// collaborators, the kafkatrace.Tracer and the Handler, are New's
// arguments; optional ones are Options (WithLogger, default slog.Default(),
// WithChain and WithMiddleware). Stage handlers (retrieval's, enrichment's,
// yours) take their settings as a Config of their own and their
// collaborators as HandlerOptions (WithTracerProvider), resolved by
// NewHandlerConfig.
//
// It uses the OpenTelemetry API only, never the SDK (a test checks it with
// go list -deps).
package consumers
