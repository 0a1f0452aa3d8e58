// SPDX-License-Identifier: Apache-2.0

//go:build !race

package gateway

// raceSlowdown stretches latency bounds under the race detector, which
// makes this code several times slower.
const raceSlowdown = 1
