// Package kafkaclient holds what every kretrieve component needs to talk to
// Kafka: the shared connection settings, the franz-go client options built
// from them (logging through kslog, client metrics through kotel, our tracing
// hooks) and topic creation at start-up.
package kafkaclient
