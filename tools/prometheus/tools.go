// SPDX-License-Identifier: Apache-2.0

//go:build tools

// Package tools pins the Prometheus server as a build dependency of this
// standalone tools module. Build it with build.sh; the kretrieve module never
// imports it.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
