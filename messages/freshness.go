// SPDX-License-Identifier: Apache-2.0

package messages

// StageFreshness is how fresh one stage's index was when the stage
// handled a request: a lower bound, read before the stage searched or
// loaded documents.
type StageFreshness struct {
	// Stage is the stage name, by the rules of [StageTiming].Stage,
	// unique within a payload's index_freshness.
	Stage string `json:"stage"`
	// Position is the index's applied position: the sum, over the
	// partitions of the documents topic, of the next offset it has
	// applied. It is never negative; it only grows while a worker follows
	// the topic (a rebuild from the start counts up again).
	Position int64 `json:"position"`
	// NewestDocumentAgeMS is the age, in milliseconds on the worker's
	// clock, of the newest document the index has applied (by its record
	// timestamp). It must be finite and may be negative: clock skew.
	NewestDocumentAgeMS float64 `json:"newest_document_age_ms"`
}

// IndexFreshness holds one [StageFreshness] entry per stage whose index
// reports its freshness, in pipeline order; at most [MaxStages]. Each
// stage keeps the entries it received and adds its own with
// [IndexFreshness.With], as with [Timings]. Stages over a static index
// add none, so the list may be empty (and is then left out on the wire).
type IndexFreshness []StageFreshness

// Stage returns the entry named name and whether there is one.
func (f IndexFreshness) Stage(name string) (StageFreshness, bool) {
	return stageEntry(f, name, freshnessStage)
}

// With returns a copy of f with e appended, or with e in place of the
// entry of the same name. The result never shares f's backing array.
func (f IndexFreshness) With(e StageFreshness) IndexFreshness {
	return withStage(f, e, freshnessStage)
}

func freshnessStage(e StageFreshness) string { return e.Stage }

// stageEntry returns the first entry of list named name: the one lookup of
// per-stage lists ([Timings], [IndexFreshness]).
func stageEntry[T any](list []T, name string, stage func(T) string) (T, bool) {
	for _, e := range list {
		if stage(e) == name {
			return e, true
		}
	}
	var zero T
	return zero, false
}

// withStage returns a copy of list with e in place of the first entry of
// the same stage name, or appended when there is none: the one update of
// per-stage lists ([Timings], [IndexFreshness]).
func withStage[T any](list []T, e T, stage func(T) string) []T {
	out := make([]T, 0, len(list)+1)
	replaced := false
	for _, x := range list {
		if stage(x) == stage(e) && !replaced {
			x, replaced = e, true
		}
		out = append(out, x)
	}
	if !replaced {
		out = append(out, e)
	}
	return out
}

// stageNameReason returns why the stage name of list[i] breaks the rules
// of a per-stage list (a legal name, unique in the list), or "".
func stageNameReason[T any](list []T, i int, stage func(T) string) string {
	name := stage(list[i])
	if reason := checkStageName(name); reason != "" {
		return reason
	}
	for _, prev := range list[:i] {
		if stage(prev) == name {
			return reasonDuplicate
		}
	}
	return ""
}

// reasonNegative is the reason of a position below zero.
const reasonNegative = "must not be negative"

// checkFreshness checks the rules of [IndexFreshness] and
// [StageFreshness]: at most MaxStages entries, legal and unique stage
// names, positions of at least 0 and finite ages.
func (v *validator) checkFreshness(f IndexFreshness) {
	if len(f) > MaxStages {
		v.check(reasonTooManyStages, named("index_freshness"))
		return
	}
	for i, e := range f {
		if v.err != nil {
			return
		}
		field := func(key string) func() string {
			return func() string { return loc{"index_freshness", i}.field(key) }
		}
		v.check(stageNameReason(f, i, freshnessStage), field("stage"))
		if e.Position < 0 {
			v.check(reasonNegative, field("position"))
		}
		v.check(checkFinite(e.NewestDocumentAgeMS), field("newest_document_age_ms"))
	}
}

// freshness reads the optional index_freshness member of obj: absent,
// null and [] read as nil. It checks the number of entries before reading
// any, so that a hostile payload costs little. position and
// newest_document_age_ms are required in each entry.
func (d *decoder) freshness(obj object) IndexFreshness {
	items := d.array(obj, top, "index_freshness", false)
	if len(items) > MaxStages {
		d.fail("index_freshness", reasonTooManyStages)
		return nil
	}
	if len(items) == 0 {
		return nil
	}
	out := make(IndexFreshness, 0, len(items))
	for i, raw := range items {
		l := loc{parent: "index_freshness", index: i}
		item := d.object(raw, l, true)
		out = append(out, StageFreshness{
			Stage:               d.string(item, l, "stage", true),
			Position:            int64(d.int(item, l, "position", true)),
			NewestDocumentAgeMS: d.float(item, l, "newest_document_age_ms", true),
		})
	}
	if d.err != nil {
		return nil
	}
	return out
}
