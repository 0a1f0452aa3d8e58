// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Reasons reported for fields that break a rule.
const (
	reasonUnsupported = "unsupported"
	reasonEmpty       = "must not be empty"
	reasonControl     = "must not contain control characters"
	reasonEdgeSpace   = "must not have leading or trailing whitespace"
	reasonOnlySpace   = "must not be only whitespace"
)

var (
	reasonIDTooLong    = "must be at most " + strconv.Itoa(MaxRequestIDLen) + " characters"
	reasonQueryTooLong = "must be at most " + strconv.Itoa(MaxQueryBytes) + " bytes"
	reasonTopK         = "must be between " + strconv.Itoa(MinTopK) + " and " + strconv.Itoa(MaxTopK)

	reasonTooManyStages = "must have at most " + strconv.Itoa(MaxStages) + " items"
	reasonStageName     = "must be 1 to " + strconv.Itoa(MaxStageNameBytes) + " ASCII letters, digits, '.', '_' or '-'"
	reasonDuplicate     = "must be unique"
)

// checkSchemaVersion accepts 0 (meaning the current version) through
// SchemaVersion.
func checkSchemaVersion(v int) string {
	if v < 0 || v > SchemaVersion {
		return reasonUnsupported
	}
	return ""
}

// checkRequestID applies the request_id rules to a non-empty id: valid
// UTF-8, at most MaxRequestIDLen characters, no control characters and no
// leading or trailing whitespace (Unicode White_Space, as unicode.IsSpace).
func checkRequestID(id string) string {
	if id == "" {
		return reasonRequired
	}
	if !utf8.ValidString(id) {
		return reasonUTF8
	}
	n := 0
	for _, r := range id {
		if unicode.IsControl(r) {
			return reasonControl
		}
		n++
	}
	if n > MaxRequestIDLen {
		return reasonIDTooLong
	}
	first, _ := utf8.DecodeRuneInString(id)
	last, _ := utf8.DecodeLastRuneInString(id)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return reasonEdgeSpace
	}
	return ""
}

// checkQuery applies the query rules: 1 to MaxQueryBytes bytes of valid
// UTF-8 with at least one character that is not Unicode White_Space.
func checkQuery(q string) string {
	switch {
	case q == "":
		return reasonRequired
	case len(q) > MaxQueryBytes:
		return reasonQueryTooLong
	case !utf8.ValidString(q):
		return reasonUTF8
	}
	for _, r := range q {
		if !unicode.IsSpace(r) {
			return ""
		}
	}
	return reasonOnlySpace
}

func checkTopK(k int) string {
	if k < MinTopK || k > MaxTopK {
		return reasonTopK
	}
	return ""
}

func checkFinite(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return reasonFinite
	}
	return ""
}

// validator collects the first rule a payload breaks.
type validator struct {
	payload string
	err     error
}

// check records reason against the field named by field, unless reason is
// empty or an earlier check failed. field is called only on failure, so
// that names of nested fields are built only when needed.
func (v *validator) check(reason string, field func() string) {
	if reason != "" && v.err == nil {
		v.err = &ValidationError{Payload: v.payload, Field: field(), Reason: reason}
	}
}

func named(name string) func() string { return func() string { return name } }

// checkStageName applies the rules of [StageTiming].Stage: 1 to
// MaxStageNameBytes ASCII letters, digits, '.', '_' or '-' (the characters
// of a Kafka topic name).
func checkStageName(name string) string {
	if name == "" || len(name) > MaxStageNameBytes {
		return reasonStageName
	}
	for i := 0; i < len(name); i++ {
		if !legalTopicByte(name[i]) {
			return reasonStageName
		}
	}
	return ""
}

// checkTimings checks the rules of [Timings] and [StageTiming]: at most
// MaxStages entries, legal and unique stage names and finite durations.
// Durations may be negative: each is measured on one worker's clock
// against a record timestamp set by another machine.
func (v *validator) checkTimings(t Timings) {
	if len(t.Stages) > MaxStages {
		v.check(reasonTooManyStages, named("timings.stages"))
		return
	}
	for i, st := range t.Stages {
		if v.err != nil {
			return
		}
		field := func(key string) func() string {
			return func() string { return loc{"timings.stages", i}.field(key) }
		}
		v.check(stageNameReason(t.Stages, i, timingStage), field("stage"))
		v.check(checkFinite(st.QueueMS), field("queue_ms"))
		v.check(checkFinite(st.WorkMS), field("work_ms"))
	}
}
