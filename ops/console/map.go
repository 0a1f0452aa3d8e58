package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathway"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// Bounds of one map computation.
const (
	catchUpTimeout = 5 * time.Second
	lagTimeout     = 10 * time.Second
	// maxReasonLetters bounds the dead letters read per topic to count
	// their reasons (only when the topic's end offset moved).
	maxReasonLetters = 10000
	// topReasons is how many reasons a stage lists.
	topReasons = 5
	// maxExemplars is how many exemplars GET /api/slowest lists.
	maxExemplars = 20
)

// mapDoc is the body of GET /api/map and of each "map" event.
type mapDoc struct {
	Updated time.Time  `json:"updated"`
	Stages  []mapStage `json:"stages"`
	Edges   []mapEdge  `json:"edges"`
	// Errors are what could not be measured (the rest is shown).
	Errors []string `json:"errors,omitempty"`
	// exemplars are the pathway latency histograms' exemplars, for GET
	// /api/slowest.
	exemplars []exemplar
}

// mapStage is a box of the map: a stage of the topology.
type mapStage struct {
	Name            string  `json:"name"`
	Group           string  `json:"group"`
	Input           string  `json:"input"`
	Output          string  `json:"output"`
	ProcessedPerSec float64 `json:"processed_per_sec"`
	// DeadLetters is the records of the dead-letter topic of the stage's
	// input; -1 when unknown.
	DeadLetters int64         `json:"dead_letters"`
	DLQTopic    string        `json:"dlq_topic"`
	TopReasons  []reasonCount `json:"top_reasons"`
}

// mapEdge is a pipeline topic between two stages (or the origin and the
// results).
type mapEdge struct {
	Topic       string  `json:"topic"`
	From        string  `json:"from"`
	To          string  `json:"to"`
	MsgsPerSec  float64 `json:"msgs_per_sec"`
	EdgeP50MS   float64 `json:"edge_p50_ms"`
	EdgeP99MS   float64 `json:"edge_p99_ms"`
	OriginP50MS float64 `json:"origin_p50_ms"`
	OriginP99MS float64 `json:"origin_p99_ms"`
	// LagRecords and LagSeconds are the consuming group's lag; -1 when
	// unknown or when no group consumes the topic (the results topic).
	LagRecords int64   `json:"lag_records"`
	LagSeconds float64 `json:"lag_seconds"`
}

type reasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// deadSummary caches a dead-letter topic's reasons until its end moves.
type deadSummary struct {
	end     int64
	reasons []reasonCount
}

func (c *Console) getMap(w http.ResponseWriter, r *http.Request, l *live) {
	writeJSON(w, http.StatusOK, l.pipelineMap(r.Context()))
}

// pipelineMap returns the map, computed at most once per half Interval
// whatever the number of browsers.
func (l *live) pipelineMap(ctx context.Context) mapDoc {
	l.mapMu.Lock()
	defer l.mapMu.Unlock()
	if !l.mapAt.IsZero() && time.Since(l.mapAt) < l.c.cfg.Interval/2 {
		return l.mapDoc
	}
	l.mapDoc = l.computeMap(ctx)
	l.mapAt = time.Now()
	return l.mapDoc
}

// computeMap reads the pathway aggregates published since the last call,
// measures the groups' lag and counts the dead letters. Called with mapMu.
func (l *live) computeMap(ctx context.Context) mapDoc {
	cfg := l.c.cfg
	topo := cfg.Topology
	doc := mapDoc{Stages: []mapStage{}, Edges: []mapEdge{}}
	var view pathwaytopic.View
	if l.reader == nil {
		r, err := pathwaytopic.NewReader(cfg.KafkaOptions, pathwaytopic.WithTopic(cfg.PathwaysTopic), pathwaytopic.WithLogger(l.c.collab.logger))
		if err != nil {
			doc.Errors = append(doc.Errors, "pathways: "+err.Error())
		}
		l.reader = r
	}
	if l.reader != nil {
		cctx, cancel := context.WithTimeout(ctx, catchUpTimeout)
		err := l.reader.CatchUp(cctx)
		cancel()
		if err != nil {
			doc.Errors = append(doc.Errors, fmt.Sprintf("read %s: %v", cfg.PathwaysTopic, err))
		}
		view = l.reader.View()
	}

	doc.exemplars = exemplarsOf(view)

	lctx, cancel := context.WithTimeout(ctx, lagTimeout)
	lags, err := lag.Measure(lctx, cfg.KafkaOptions, topo.Groups()...)
	cancel()
	if err != nil {
		doc.Errors = append(doc.Errors, "lag: "+err.Error())
	}
	dead, derr := l.deadLetters(ctx)
	if derr != nil {
		doc.Errors = append(doc.Errors, "dead letters: "+derr.Error())
	}

	for _, st := range topo.Stages {
		dlq := messages.DLQTopic(st.Input)
		ms := mapStage{Name: st.Name, Group: st.Group, Input: st.Input, Output: st.Output, DLQTopic: dlq, DeadLetters: -1, TopReasons: []reasonCount{}}
		ms.ProcessedPerSec, _, _ = pathwayOf(view, st.Input, st.Group)
		if d, ok := dead[dlq]; ok {
			ms.DeadLetters = d.n
			ms.TopReasons = d.reasons
		}
		doc.Stages = append(doc.Stages, ms)
	}
	for i, topic := range topo.Topics() {
		e := mapEdge{Topic: topic, From: "origin", To: "results", LagRecords: -1, LagSeconds: -1}
		group := ""
		if i > 0 {
			e.From = topo.Stages[i-1].Name
		}
		if i < len(topo.Stages) {
			e.To, group = topo.Stages[i].Name, topo.Stages[i].Group
		}
		var edge, origin pathway.Snapshot
		e.MsgsPerSec, edge, origin = pathwayOf(view, topic, group)
		if edge.Count > 0 {
			e.EdgeP50MS, e.EdgeP99MS = ms(edge.Quantile(0.5)), ms(edge.Quantile(0.99))
			e.OriginP50MS, e.OriginP99MS = ms(origin.Quantile(0.5)), ms(origin.Quantile(0.99))
		}
		if group != "" && err == nil {
			e.LagRecords, e.LagSeconds = groupLag(lags, group, topic)
		}
		doc.Edges = append(doc.Edges, e)
	}
	doc.Updated = time.Now().UTC()
	return doc
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

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
// latency series, the slowest first, at most maxExemplars, each named
// after its series of otelnames.MetricPathwayLatency.
func exemplarsOf(v pathwaytopic.View) []exemplar {
	out := []exemplar{}
	add := func(measure string, r pathwaytopic.Row, s pathway.Snapshot) {
		// The series' measure and edge: "… edge requests → retrieval".
		metric := otelnames.MetricPathwayLatency + " " + measure + " " + r.Edge()
		for _, e := range s.Exemplars {
			out = append(out, exemplar{TraceID: e.TraceID.String(), Metric: metric, ValueMS: ms(e.Value)})
		}
	}
	for _, r := range v.Rows {
		add(otelnames.MeasureEdge, r, r.Latency)
		add(otelnames.MeasureOrigin, r, r.Origin)
	}
	slices.SortFunc(out, func(a, b exemplar) int {
		return cmp.Or(cmp.Compare(b.ValueMS, a.ValueMS), cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.TraceID, b.TraceID))
	})
	return out[:min(len(out), maxExemplars)]
}

// groupLag sums group's lag on topic's partitions: records, and the
// oldest unconsumed record's age. -1 when a partition's is unknown.
func groupLag(lags []lag.PartitionLag, group, topic string) (records int64, seconds float64) {
	for _, pl := range lags {
		if pl.Group != group {
			continue
		}
		if pl.Partition < 0 {
			return -1, -1
		}
		if pl.Topic != topic {
			continue
		}
		if pl.Records < 0 || records < 0 {
			records = -1
		} else {
			records += pl.Records
		}
		if pl.Seconds < 0 || seconds < 0 {
			seconds = -1
		} else {
			seconds = max(seconds, pl.Seconds)
		}
	}
	return records, seconds
}

type deadCount struct {
	n       int64
	reasons []reasonCount
}

// deadLetters counts the records of each stage's dead-letter topic (end
// minus start offsets) and, when a topic's end moved since the last call,
// reads its letters again for their reasons.
func (l *live) deadLetters(ctx context.Context) (map[string]deadCount, error) {
	var dlqs []string
	for _, st := range l.c.cfg.Topology.Stages {
		dlqs = append(dlqs, messages.DLQTopic(st.Input))
	}
	starts, err := l.adm.ListStartOffsets(ctx, dlqs...)
	if err != nil {
		return nil, err
	}
	ends, err := l.adm.ListEndOffsets(ctx, dlqs...)
	if err != nil {
		return nil, err
	}
	out := map[string]deadCount{}
	var errs []error
	for _, dlq := range dlqs {
		var n, endSum int64
		ok := ends[dlq] != nil
		ends.Each(func(o kadm.ListedOffset) {
			if o.Topic != dlq {
				return
			}
			s, found := starts.Lookup(dlq, o.Partition)
			if o.Err != nil || !found || s.Err != nil {
				ok = false
				return
			}
			n += max(o.Offset-s.Offset, 0)
			endSum += o.Offset
		})
		if !ok {
			errs = append(errs, fmt.Errorf("%s: offsets not listed", dlq))
			continue
		}
		d := deadCount{n: n, reasons: []reasonCount{}}
		cached, seen := l.dead[dlq]
		switch {
		case n == 0:
		case seen && cached.end == endSum:
			d.reasons = cached.reasons
		default:
			letters, err := deadletters.List(ctx, l.c.cfg.KafkaOptions, []string{dlq}, maxReasonLetters)
			if err != nil {
				errs = append(errs, err)
				break
			}
			d.reasons = top(countBy(letters, func(l deadletters.Letter) string { return l.Reason }), topReasons)
			l.dead[dlq] = deadSummary{end: endSum, reasons: d.reasons}
		}
		out[dlq] = d
	}
	return out, errors.Join(errs...)
}

// countBy counts letters by key, most frequent first (then by key).
func countBy(letters []deadletters.Letter, key func(deadletters.Letter) string) []reasonCount {
	counts := map[string]int{}
	for _, l := range letters {
		counts[key(l)]++
	}
	out := make([]reasonCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, reasonCount{Reason: k, Count: n})
	}
	slices.SortFunc(out, func(a, b reasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

func top(rs []reasonCount, n int) []reasonCount {
	if len(rs) > n {
		return rs[:n]
	}
	return rs
}
