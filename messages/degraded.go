// SPDX-License-Identifier: Apache-2.0

package messages

import "strconv"

// Degradation is one thing a stage left out of a [Result] because the
// caller's deadline ([HeaderDeadline]) was near: the result holds less
// than the request asked for, rather than nothing. docs/operations.md
// lists what each stage may drop.
type Degradation struct {
	// Stage is the stage that left something out, by the rules of
	// [StageTiming].Stage.
	Stage string `json:"stage"`
	// Dropped names what it left out: "snippets" (enrichment: documents
	// without highlighted snippets). 1 to MaxTokenBytes lowercase ASCII
	// letters, digits or '_'.
	Dropped string `json:"dropped"`
	// Reason says why, by the rules of Dropped: "deadline" (the budget
	// left was too short for the full work).
	Reason string `json:"reason"`
}

// Values of [Degradation] fields that kretrieve writes.
const (
	// DroppedSnippets: the documents have empty snippets.
	DroppedSnippets = "snippets"
	// ReasonDeadline: the caller's deadline was too near for the work.
	ReasonDeadline = "deadline"
)

// MaxTokenBytes is the longest [Degradation].Dropped or Reason.
const MaxTokenBytes = 64

var reasonToken = "must be 1 to " + strconv.Itoa(MaxTokenBytes) + " lowercase ASCII letters, digits or '_'"

// checkToken applies the rules of a [Degradation] token.
func checkToken(s string) string {
	if s == "" || len(s) > MaxTokenBytes {
		return reasonToken
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return reasonToken
		}
	}
	return ""
}

// checkDegraded checks the rules of a result's degraded list: at most
// MaxStages entries, each with a legal stage name and tokens.
func (v *validator) checkDegraded(list []Degradation) {
	if len(list) > MaxStages {
		v.check(reasonTooManyStages, named("degraded"))
		return
	}
	for i, e := range list {
		field := func(key string) func() string {
			return func() string { return loc{"degraded", i}.field(key) }
		}
		v.check(checkStageName(e.Stage), field("stage"))
		v.check(checkToken(e.Dropped), field("dropped"))
		v.check(checkToken(e.Reason), field("reason"))
	}
}

// degraded reads the optional degraded member of obj: absent, null and []
// read as nil. It checks the number of entries before reading any.
func (d *decoder) degraded(obj object) []Degradation {
	items := d.array(obj, top, "degraded", false)
	if len(items) > MaxStages {
		d.fail("degraded", reasonTooManyStages)
		return nil
	}
	if len(items) == 0 {
		return nil
	}
	out := make([]Degradation, 0, len(items))
	for i, raw := range items {
		l := loc{parent: "degraded", index: i}
		item := d.object(raw, l, true)
		out = append(out, Degradation{
			Stage:   d.string(item, l, "stage", true),
			Dropped: d.string(item, l, "dropped", true),
			Reason:  d.string(item, l, "reason", true),
		})
	}
	if d.err != nil {
		return nil
	}
	return out
}
