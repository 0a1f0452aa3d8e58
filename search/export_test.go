// SPDX-License-Identifier: Apache-2.0

package search

import "context"

// Compact merges the segments of ix, an on-disk index opened writable (or
// built), into one, as Build does: for tests that compare scores, which
// depend on the segments (see TestApplyEquivalentToNewMemory). It must not
// be called on a NewMemory index, which has no merger.
func Compact(ctx context.Context, ix *Index) error { return compact(ctx, ix.idx) }
