// SPDX-License-Identifier: Apache-2.0

// Package w3ctest holds W3C Trace Context test data shared by the tests of
// tracecontext and kafkatrace.
package w3ctest

import (
	"fmt"
	"strings"
)

// Traceparent is a valid, sampled version 00 traceparent.
const Traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// Members returns n tracestate members "k<i>=<value>", i counting from
// from, with values padded to width characters.
func Members(n, from, width int) []string {
	out := make([]string, n)
	for i := range out {
		m := fmt.Sprintf("k%d=", from+i)
		out[i] = m + strings.Repeat("v", max(width-len(m), 1))
	}
	return out
}
