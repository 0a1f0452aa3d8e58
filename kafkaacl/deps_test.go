// SPDX-License-Identifier: Apache-2.0

package kafkaacl

import (
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/depcheck"
)

// TestImportsOnlyTopicsAndKmsgKadm backs the package doc: messages,
// topology and franz-go's kmsg and kadm only.
func TestImportsOnlyTopicsAndKmsgKadm(t *testing.T) {
	depcheck.OnlyImports(t, depcheck.Imports(t, false), "",
		depcheck.Module+"/messages", depcheck.Module+"/topology",
		"github.com/twmb/franz-go/pkg/kmsg", "github.com/twmb/franz-go/pkg/kadm")
}
