// SPDX-License-Identifier: Apache-2.0

package topology

import (
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyMessages backs the package doc's claim: plain data over
// the standard library and package messages, so that every layer can take
// a Topology.
func TestImportsOnlyMessages(t *testing.T) {
	for _, dep := range depcheck.Deps(t) {
		switch {
		case dep == "github.com/kretrieve/kretrieve/topology", dep == "github.com/kretrieve/kretrieve/messages":
		case strings.Contains(strings.SplitN(dep, "/", 2)[0], "."):
			t.Errorf("depends on %s: only the standard library and messages are allowed", dep)
		}
	}
}
