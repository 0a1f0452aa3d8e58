// SPDX-License-Identifier: Apache-2.0

//go:build tools

// Package tools pins the Jaeger v2 all-in-one binary as a build dependency of
// this standalone tools module. Build it with build.sh; it is never imported by
// the kretrieve module itself.
package tools

import (
	_ "github.com/jaegertracing/jaeger/cmd/jaeger"
)
