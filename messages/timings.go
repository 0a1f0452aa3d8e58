// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Names of the two default stages: the one home of these names. Each also
// names the stage's consumer group, its worker command (kretrieve
// retrieval) and its ACL role (package topology builds the default
// pipeline from them). They are also the stages whose timings
// schema_version 1 carried as flat members of timings, which a payload
// still writes and reads for them (see [Timings]).
const (
	StageRetrieval  = "retrieval"
	StageEnrichment = "enrichment"
)

// StageTiming is one stage's durations in milliseconds.
type StageTiming struct {
	// Stage is the stage name, such as [StageRetrieval]: 1 to
	// [MaxStageNameBytes] ASCII letters, digits, '.', '_' or '-', unique
	// within a payload.
	Stage string `json:"stage"`
	// QueueMS runs from the stage's input record timestamp to the worker's
	// start. It may be negative: clock skew.
	QueueMS float64 `json:"queue_ms"`
	// WorkMS is the time spent in the stage's handler.
	WorkMS float64 `json:"work_ms"`
}

// Timings are per-stage durations, measured by the workers on their own
// clocks, one entry per stage in pipeline order. Queue times compare a
// record's timestamp with the worker's clock, so clock skew can make them
// negative. Each stage keeps the timings it received and adds its own
// entry with [Timings.With].
//
// On the wire (schema_version 2) timings is an object whose stages member
// holds the entries. For readers of schema_version 1, which knew only
// retrieval_queue_ms, retrieval_ms, enrichment_queue_ms and enrichment_ms,
// the entries named [StageRetrieval] and [StageEnrichment] are also
// written as those flat members (only the entries present). A decoder
// reads stages when it is present and not null; otherwise it reads the
// flat members into entries named [StageRetrieval] and [StageEnrichment],
// one for each stage with at least one of its two members present and not
// null. At most [MaxStages] entries are allowed.
type Timings struct {
	// Stages holds the entries in pipeline order; nil when there are none.
	Stages []StageTiming `json:"stages"`
}

// Stage returns the entry named name and whether there is one.
func (t Timings) Stage(name string) (StageTiming, bool) {
	return stageEntry(t.Stages, name, timingStage)
}

// With returns a copy of t with st appended, or with st in place of the
// entry of the same name. The result never shares t's slice, so t can be
// passed on unchanged.
func (t Timings) With(st StageTiming) Timings {
	return Timings{Stages: withStage(t.Stages, st, timingStage)}
}

func timingStage(st StageTiming) string { return st.Stage }

// legacyStage names the flat members that schema_version 1 used for one
// stage's timings.
type legacyStage struct {
	stage, queue, work string
}

// legacyStages are the stages schema_version 1 knew, in pipeline order.
var legacyStages = [...]legacyStage{
	{StageRetrieval, "retrieval_queue_ms", "retrieval_ms"},
	{StageEnrichment, "enrichment_queue_ms", "enrichment_ms"},
}

// MarshalJSON writes t as {"stages":[...]} followed by the flat members of
// schema_version 1 for the [StageRetrieval] and [StageEnrichment] entries
// present. A nil Stages is written as []. It does not validate t: the
// encoders do.
func (t Timings) MarshalJSON() ([]byte, error) {
	stages := t.Stages
	if stages == nil {
		stages = []StageTiming{}
	}
	b, err := json.Marshal(stages)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+160)
	out = append(out, `{"stages":`...)
	out = append(out, b...)
	for _, ls := range legacyStages {
		st, ok := t.Stage(ls.stage)
		if !ok {
			continue
		}
		if out, err = appendMember(out, ls.queue, st.QueueMS); err != nil {
			return nil, err
		}
		if out, err = appendMember(out, ls.work, st.WorkMS); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// appendMember appends ,"name":f to b, f formatted as encoding/json does.
func appendMember(b []byte, name string, f float64) ([]byte, error) {
	v, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	b = append(b, ',')
	b = strconv.AppendQuote(b, name)
	b = append(b, ':')
	return append(b, v...), nil
}

// UnmarshalJSON reads a timings object by the rules of the payload
// decoders, described on [Timings], and validates it. A null leaves t
// unchanged. Errors are a [*DecodeError] or a [*ValidationError], with
// field names such as "timings.stages[2].queue_ms".
func (t *Timings) UnmarshalJSON(b []byte) error {
	if !isPresent(b) {
		return nil
	}
	d := newDecoder("", b)
	got := d.timingsValue(b)
	if err := d.result(); err != nil {
		return err
	}
	v := validator{}
	v.checkTimings(got)
	if v.err != nil {
		return v.err
	}
	*t = got
	return nil
}

// timings reads the optional timings member of obj.
func (d *decoder) timings(obj object) Timings {
	return d.timingsValue(obj.get("timings"))
}

// timingsValue reads the raw timings value, which may be absent or null
// (no entries). The flat members of schema_version 1 must be numbers or
// null even when stages is present, but only then are they ignored.
func (d *decoder) timingsValue(raw []byte) Timings {
	l := loc{parent: "timings", index: -1}
	obj := d.object(raw, l, false)
	if obj == nil {
		return Timings{}
	}
	var t Timings
	if present(obj, "stages") {
		t = d.stages(obj, l)
	}
	var legacy []StageTiming
	for _, ls := range legacyStages {
		hasQueue, hasWork := present(obj, ls.queue), present(obj, ls.work)
		queue := d.float(obj, l, ls.queue, false)
		work := d.float(obj, l, ls.work, false)
		if hasQueue || hasWork {
			legacy = append(legacy, StageTiming{Stage: ls.stage, QueueMS: queue, WorkMS: work})
		}
	}
	if d.err != nil {
		return Timings{}
	}
	if !present(obj, "stages") {
		t.Stages = legacy
	}
	return t
}

// stages reads the stages array of the timings object obj, which l
// locates. It checks the number of entries before reading any, so that a
// hostile payload costs little. An empty array reads as nil.
func (d *decoder) stages(obj object, l loc) Timings {
	items := d.array(obj, l, "stages", false)
	if len(items) > MaxStages {
		d.fail(l.field("stages"), reasonTooManyStages)
		return Timings{}
	}
	if len(items) == 0 {
		return Timings{}
	}
	out := make([]StageTiming, 0, len(items))
	parent := l.field("stages")
	for i, raw := range items {
		sl := loc{parent: parent, index: i}
		item := d.object(raw, sl, true)
		out = append(out, StageTiming{
			Stage:   d.string(item, sl, "stage", true),
			QueueMS: d.float(item, sl, "queue_ms", false),
			WorkMS:  d.float(item, sl, "work_ms", false),
		})
	}
	if d.err != nil {
		return Timings{}
	}
	return Timings{Stages: out}
}

// BoundQueue returns a copy of t whose queue times lie within the
// request's whole duration total, either sign, and how many were cut. A
// stage's queue time compares its input record's timestamp with its
// worker's clock; total is measured on one clock (the gateway's, from
// publishing the request to its result), so a queue time longer than it
// is clock skew between processes, not time spent.
func (t Timings) BoundQueue(total time.Duration) (Timings, int) {
	limit := float64(total) / float64(time.Millisecond)
	out := Timings{Stages: slices.Clone(t.Stages)}
	n := 0
	for i := range out.Stages {
		if q := out.Stages[i].QueueMS; q > limit || q < -limit {
			out.Stages[i].QueueMS = min(max(q, -limit), limit)
			n++
		}
	}
	return out, n
}
