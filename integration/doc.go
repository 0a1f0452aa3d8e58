// SPDX-License-Identifier: Apache-2.0

// Package integration is kretrieve's black-box test tier: every component
// runs in its own container (testcontainers-go, host networking, all traffic
// on 127.0.0.1) and the assertions go through the gateway's HTTP API and
// Jaeger's query API. The tests carry the `integration` build tag and run
// with `make integration`, which builds the images first.
//
// They are the model for users' own tests: start the containers with
// cleanup registered before the error check, wait for readiness, drive the
// system from outside, assert on the traces.
package integration
