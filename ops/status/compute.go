// SPDX-License-Identifier: Apache-2.0

package status

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/topology"
)

// Ends of the edges besides the stages.
const (
	// Origin is the From of the first edge: the producers.
	Origin = "origin"
	// Results is the To of the last edge: the request clients.
	Results = "results"
)

// Bounds of a Status.
const (
	// TopReasons is how many reasons a stage lists.
	TopReasons = 5
	// MaxExemplars is how many exemplars a Status lists.
	MaxExemplars = 20
)

// measured is what a Source read from Kafka, for compute.
type measured struct {
	topology topology.Topology
	view     pathwaytopic.View
	// lags are the groups' lags; lagErr the error of the measurement as a
	// whole.
	lags   []lag.PartitionLag
	lagErr error
	// retentionErr says which topics' retention.ms could not be
	// described (their retention headroom is unknown).
	retentionErr error
	// dead is the count of each stage input's dead-letter topic, by
	// dead-letter topic.
	dead map[string]deadCount
	// feeds are the instances' feeds (where their indexes stand), and
	// feedLags their lags by feedKey; feedLagErr the error of their
	// measurement as a whole.
	feeds      []feedOf
	feedLags   map[feedKey][]lag.PartitionLag
	feedLagErr error
	// now is the time of the measurement.
	now time.Time
	// unfinishedAfter is Config.UnfinishedAfter.
	unfinishedAfter time.Duration
}

// deadCount is one dead-letter topic's letters.
type deadCount struct {
	n       Maybe[int64]
	reasons []ReasonCount
	err     error
}

// compute applies the package's rules to what was read.
func compute(m measured) Status {
	st := Status{Instances: m.view.Instances, Pathways: pathwaysOf(m.view), Exemplars: exemplarsOf(m.view),
		Stages: []Stage{}, Edges: []Edge{}}
	if len(m.view.Skipped) > 0 {
		st.Skipped = m.view.Skipped
	}
	if m.lagErr != nil {
		st.Errors = append(st.Errors, "lag: "+m.lagErr.Error())
	}
	if m.retentionErr != nil {
		st.Errors = append(st.Errors, "retention headroom: "+firstLine(m.retentionErr))
	}
	byTopic, groupErrs := groupLags(m.lags)
	st.GroupErrors = groupErrs
	for _, s := range m.topology.Stages {
		dlq := messages.DLQTopic(s.Input)
		d := m.dead[dlq]
		stage := Stage{Name: s.Name, Group: s.Group, Input: s.Input, Output: s.Output, DLQTopic: dlq,
			DeadLetters: d.n, TopReasons: d.reasons, Error: errString(d.err)}
		stage.Rate, _, _ = pathwayOf(m.view, s.Input, s.Group)
		if stage.TopReasons == nil {
			stage.TopReasons = []ReasonCount{}
		}
		st.Stages = append(st.Stages, stage)
	}
	for i, topic := range m.topology.Topics() {
		e := Edge{Topic: topic, From: Origin, To: Results, Lags: byTopic[topic]}
		if i > 0 {
			e.From = m.topology.Stages[i-1].Name
		}
		if i < len(m.topology.Stages) {
			e.To, e.Group = m.topology.Stages[i].Name, m.topology.Stages[i].Group
		}
		var edge, origin pathway.Snapshot
		e.Rate, edge, origin = pathwayOf(m.view, topic, e.Group)
		e.Latency, e.Origin = quantilesOf(edge), quantilesOf(origin)
		e.Lag = edgeLag(e, groupErrs)
		st.Edges = append(st.Edges, e)
	}
	st.Completeness = completenessOf(m.view, m.topology, m.now, cmp.Or(m.unfinishedAfter, DefaultUnfinishedAfter))
	st.Indexes = indexesOf(m.view, m.feeds, m.feedLags, m.feedLagErr, m.now)
	if m.feedLagErr != nil {
		st.Errors = append(st.Errors, "index lag: "+m.feedLagErr.Error())
	}
	return st
}

// edgeLag is the lag of the group consuming e, from its Lags.
func edgeLag(e Edge, groupErrs []GroupError) Lag {
	if e.Group == "" {
		return Lag{}
	}
	if i := slices.IndexFunc(e.Lags, func(g GroupLag) bool { return g.Group == e.Group }); i >= 0 {
		return e.Lags[i].Lag
	}
	if i := slices.IndexFunc(groupErrs, func(g GroupError) bool { return g.Group == e.Group }); i >= 0 {
		return Lag{Error: groupErrs[i].Error}
	}
	return Lag{}
}

// groupLags sums the partitions' lags by topic and group (each topic's by
// group); the groups measured as a whole in error are apart.
func groupLags(lags []lag.PartitionLag) (map[string][]GroupLag, []GroupError) {
	type key struct{ topic, group string }
	parts := map[key][]lag.PartitionLag{}
	var groupErrs []GroupError
	for _, pl := range lags {
		if pl.Partition < 0 {
			groupErrs = append(groupErrs, GroupError{Group: pl.Group, Error: errString(pl.Err)})
			continue
		}
		k := key{pl.Topic, pl.Group}
		parts[k] = append(parts[k], pl)
	}
	byTopic := map[string][]GroupLag{}
	for k, ps := range parts {
		byTopic[k.topic] = append(byTopic[k.topic], GroupLag{Group: k.group, Lag: lagOf(ps)})
	}
	for _, gls := range byTopic {
		slices.SortFunc(gls, func(a, b GroupLag) int { return cmp.Compare(a.Group, b.Group) })
	}
	return byTopic, groupErrs
}

// lagOf is the Lag of a group or reader on a topic from its partitions'
// (lag.Sum), with the first partition's error.
func lagOf(parts []lag.PartitionLag) Lag {
	records, seconds, err := lag.Sum(parts)
	l := Lag{Error: firstLine(err), Health: healthOf(parts, records)}
	if records >= 0 {
		l.Records = Of(records)
	}
	if seconds >= 0 {
		l.Seconds = Of(seconds)
	}
	return l
}

// quantilesOf returns s's quantiles, unknown when s measured nothing.
func quantilesOf(s pathway.Snapshot) Quantiles {
	if s.Count == 0 {
		return Quantiles{}
	}
	q := func(p float64) Maybe[float64] { return Of(ms(s.Quantile(p))) }
	return Quantiles{P50: q(0.5), P95: q(0.95), P99: q(0.99)}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// pathwaysOf returns the view's rows with their quantiles.
func pathwaysOf(v pathwaytopic.View) []Pathway {
	out := make([]Pathway, 0, len(v.Rows))
	for _, r := range v.Rows {
		out = append(out, Pathway{Checkpoint: r.Checkpoint, Hash: r.Hash, Parent: r.Parent, Depth: r.Depth, Overflow: r.Hash == 0,
			Count: r.Count, Total: r.Total, Rate: r.Rate, Instances: r.Instances, Late: r.Late,
			Latency: quantilesOf(r.Latency), Origin: quantilesOf(r.Origin)})
	}
	return out
}

// pathwayOf merges the pathway rows of the records read from topic by
// group ("" for any reader, such as the results' collectors): their rate
// and their edge and from-origin latency in the windows. A topic read by
// no group (the results, which every collector reads whole) takes its rate
// from the records written to it: summing its readers would count each
// record once per collector.
func pathwayOf(v pathwaytopic.View, topic, group string) (rate float64, edge, origin pathway.Snapshot) {
	var written float64
	wrote := false
	for _, r := range v.Rows {
		cp := r.Checkpoint
		if cp.Topic != topic {
			continue
		}
		if cp.Direction == pathway.Out {
			written += r.Rate
			wrote = true
			continue
		}
		if cp.Direction != pathway.In || group != "" && cp.Group != group {
			continue
		}
		rate += r.Rate
		edge.Merge(r.Latency)
		origin.Merge(r.Origin)
	}
	if group == "" && wrote {
		rate = written
	}
	return rate, edge, origin
}

// exemplarsOf returns the exemplars of the view's edge and from-origin
// latency series, the slowest first, at most MaxExemplars, each named
// after its series of otelnames.MetricPathwayLatency.
func exemplarsOf(v pathwaytopic.View) []Exemplar {
	out := []Exemplar{}
	add := func(measure string, r pathwaytopic.Row, s pathway.Snapshot) {
		// The series' measure and edge: "… edge requests → retrieval".
		metric := otelnames.MetricPathwayLatency + " " + measure + " " + r.Edge()
		for _, e := range s.Exemplars {
			out = append(out, Exemplar{TraceID: e.TraceID.String(), Metric: metric, ValueMS: ms(e.Value)})
		}
	}
	for _, r := range v.Rows {
		add(otelnames.MeasureEdge, r, r.Latency)
		add(otelnames.MeasureOrigin, r, r.Origin)
	}
	slices.SortFunc(out, func(a, b Exemplar) int {
		return cmp.Or(cmp.Compare(b.ValueMS, a.ValueMS), cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.TraceID, b.TraceID))
	})
	return out[:min(len(out), MaxExemplars)]
}

// CountBy counts letters by key, most frequent first (then by key).
func CountBy(letters []deadletters.Letter, key func(deadletters.Letter) string) []ReasonCount {
	counts := map[string]int{}
	for _, l := range letters {
		counts[key(l)]++
	}
	return Ranked(counts)
}

// Ranked lists counts by reason, most frequent first (then by reason): the
// one order of dead-letter reasons.
func Ranked(counts map[string]int) []ReasonCount {
	out := make([]ReasonCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, ReasonCount{Reason: k, Count: n})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// firstLine is the first line of err's message, "" for nil: of joined
// errors, the first.
func firstLine(err error) string {
	line, _, _ := strings.Cut(errString(err), "\n")
	return line
}
