// SPDX-License-Identifier: Apache-2.0

// Package compose holds the Docker Compose deployment of kretrieve for one
// machine: the repository's compose.yaml (Kafka, the ingest of the
// documents, the retrieval and enrichment workers following them, the HTTP
// gateway) and the configuration of the telemetry stack it mounts from this
// directory: the OpenTelemetry Collector (redaction, tail sampling), Jaeger,
// Tempo, Prometheus and Grafana with its data sources and the kretrieve
// dashboard.
//
// The package has no code. Its tests parse compose.yaml and every file it
// mounts and check them against the binary and docs/configuration.md without
// Docker: real subcommands and flags, documented KRETRIEVE_* and OTEL_*
// variables, brokers, OTLP endpoint and gateway port against the services
// that serve them, topics and partitions against the messages package, the
// documents topic from ingest to the workers' own indexes, shutdown grace
// periods, the collector's pipelines, and the dashboard's PromQL against the
// metrics the code emits.
package compose
