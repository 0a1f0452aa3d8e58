// SPDX-License-Identifier: Apache-2.0

// Package broker runs an embedded Kafka-compatible broker, built on franz-go's
// kfake, for development and tests.
//
// It speaks the Kafka protocol well enough for every kretrieve component
// (produce, fetch, consumer groups, offsets, topic administration) and can
// persist its state to a directory across restarts. For testing secured
// deployments it can listen with TLS (optionally requiring client
// certificates), require SASL users (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
// and enforce ACLs, seeding each user with kafkaacl rules. SASL logins pass
// a guard in front of kfake that admits only the configured users, and a
// PLAIN login only with the user's password, whatever kfake would accept;
// failed logins are logged at WARN (user and source address) and slow down
// further attempts from their source, and SCRAM does not reveal which
// users exist.
// It is not a
// production broker: production deployments use real Apache Kafka (or a
// compatible service) and point kretrieve at it with --brokers.
package broker
