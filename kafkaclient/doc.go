// SPDX-License-Identifier: Apache-2.0

// Package kafkaclient holds what every kretrieve component needs to talk to
// Kafka: the shared connection settings (brokers, client id, TLS, SASL,
// linger, compression), the franz-go client options built from them
// (logging through kslog, broker connection metrics through kotel, our
// tracing hooks), Check, the start-up connection check that fails fast on
// rejected credentials, WaitReachable, which retries brokers that do not
// answer yet (until they do, or for a one-shot command's few seconds), and
// topic creation at start-up that copes with principals not allowed to
// create topics (EnsureTopics; EnsureCompactedTopics for topics whose
// latest record per key is the state, which it also checks are
// compacted).
//
// Secrets (the SASL password) are held in Secret, which never prints its
// value. The package imports franz-go, the OpenTelemetry metric API and
// internal/backoff (the retry delays' jitter) only.
package kafkaclient
