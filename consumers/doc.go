// Package consumers is kretrieve's consumer-group runtime: it polls records,
// starts their wait and process spans, runs a Handler wrapped in middleware
// (recover, retry), publishes the handler's output records, dead-letters
// records that cannot be processed, and commits input offsets only after the
// outputs are acknowledged (at-least-once).
//
// The retrieval and enrichment workers live in the sub-packages retrieval and
// enrichment. This package does not import producer/.
package consumers
