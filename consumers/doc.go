// Package consumers is kretrieve's consumer-group runtime: it polls records,
// runs a Handler wrapped in middleware, publishes the handler's output
// records, and commits input offsets only after the outputs are
// acknowledged (at-least-once). Each cross-cutting concern is a Middleware
// of its own file: Trace (the wait and process spans), DeadLetter (records
// that cannot be processed go to their dead-letter topic, built by package
// deadletters), Recover, Limit and Retry.
//
// Each assigned partition has a goroutine and a bounded queue fed by the
// poll loop: records of a partition are processed in order, partitions in
// parallel, so a slow partition delays only itself, and a partition whose
// queue is full stops being fetched, so under a backlog every partition
// drains from the start. A failed output rewinds only its partition; a
// revoked partition finishes its record in flight and commits before it is
// given away.
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
// A Worker's settings are its Config (checked by Config.Validate); its
// required collaborators, the kafkatrace.Tracer and the Handler, are New's
// arguments; optional ones are Options (WithLogger, default slog.Default(),
// and WithMiddleware). Stage handlers (retrieval's, enrichment's, yours)
// take their settings as a Config of their own and their collaborators as
// HandlerOptions (WithTracerProvider), resolved by NewHandlerConfig.
//
// It uses the OpenTelemetry API only, never the SDK (a test checks it with
// go list -deps).
package consumers
