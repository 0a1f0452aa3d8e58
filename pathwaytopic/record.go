// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kretrieve/kretrieve/internal/termsafe"
	"github.com/kretrieve/kretrieve/pathway"
)

// Version is the version of the record format that Encode writes and
// Decode reads.
const Version = 1

// Bounds on what Decode accepts.
const (
	// MaxRecordBytes bounds a record's value.
	MaxRecordBytes = 1 << 20
	// MaxSeries bounds the series of one window: well above the pathway
	// series of one process (kafkatrace.DefaultMaxPathways plus one
	// overflow series per checkpoint).
	MaxSeries = 4096
	// MaxNameBytes bounds service names, consumer groups and instance ids.
	MaxNameBytes = 255
	// MaxCount bounds every count of a series in one window (2^48), so that
	// sums over many instances cannot overflow.
	MaxCount = 1 << 48
	// MinInterval and MaxInterval bound a publisher's interval.
	MinInterval = 10 * time.Millisecond
	MaxInterval = time.Hour
	// MaxWindow bounds a window's length (a publisher that failed for a
	// long time publishes one long window).
	MaxWindow = 7 * 24 * time.Hour
	// MaxExemplars bounds the exemplars of one histogram of a series.
	MaxExemplars = 8
	// MaxWindowExemplars bounds the exemplars of a whole window: with
	// at most 150 bytes each (132 measured), they add at most 77 KB to a
	// record (TestPublishedExemplarsAreBounded).
	MaxWindowExemplars = 512
	maxTopicBytes      = 249
)

// The bucket index range of pathway histograms, at pathway.Scale.
var (
	minBucket = pathway.BucketIndex(time.Nanosecond)
	maxBucket = pathway.BucketIndex(math.MaxInt64)
)

// Window is what one process measured on its pathways over one window.
type Window struct {
	// Service is the service.name of the process.
	Service string
	// Instance identifies the process; it is the record's key.
	Instance string
	// Start and End bound the window.
	Start, End time.Time
	// Interval is the publisher's interval: how soon the next window
	// should follow.
	Interval time.Duration
	// Series are the pathway series measured in the window.
	Series []Series
	// Feeds are where the process's indexes stand in the topics they
	// follow (WithFeeds), by name and topic.
	Feeds []Feed
	// Final marks the last window of a process that stopped (Publisher.Run
	// publishes it when its context ends): no window follows it.
	Final bool
	// Seen is when, on the reader's clock, the window was published as
	// far as a Reader can tell (see Reader): it judges the window's age by
	// Seen, never by the writer's clock. Not encoded; zero for windows
	// not read by a Reader, whose age Stale and Late judge by End.
	Seen time.Time
}

// Series is one pathway at one checkpoint over a window.
type Series struct {
	// Checkpoint is where the latencies were measured.
	Checkpoint pathway.Checkpoint
	// Hash and Parent identify the pathway; both 0 for the overflow series
	// of pathways beyond the process's bound.
	Hash, Parent uint64
	// Total is the series' count since the process started measuring it.
	Total uint64
	// Edge and Origin are the edge and from-origin latencies measured in
	// the window. Their Exemplars are not the window's: they are the
	// newest ones the process's histograms hold at the window's end (at
	// most MaxExemplars each, MaxWindowExemplars in all), as Prometheus
	// gets them, so that every window links to recent traces.
	Edge, Origin pathway.Snapshot
	// Cohorts are the series' records by the origin time of their
	// pathway since the process started measuring it, cumulatively, the
	// bins within pathway.CohortHorizon of the window's end only, oldest
	// first: a window holds all a Reader needs to judge completeness,
	// whatever windows compaction dropped before it.
	Cohorts []pathway.CohortCount
}

// Reasons of an InvalidError.
const (
	ReasonTooLarge   = "too large"
	ReasonMalformed  = "malformed"
	ReasonVersion    = "unsupported version"
	ReasonKey        = "key mismatch"
	ReasonWindow     = "bad window"
	ReasonTooMany    = "too many series"
	ReasonSeries     = "bad series"
	ReasonTombstone  = "tombstone"
	ReasonInstances  = "too many instances"
	ReasonDuplicated = "duplicate series"
	ReasonExemplars  = "too many exemplars"
	// ReasonFuture: the window ends more than MaxAhead after the Reader
	// received it.
	ReasonFuture = "from the future"
	// ReasonRate: a series claims more than MaxRate records per second.
	ReasonRate = "implausible rate"
	// ReasonBudget: the Reader holds MaxReaderSeries series already.
	ReasonBudget = "too many series in all"
)

// InvalidError is a record refused: by Decode, or by a Reader that keeps
// MaxInstances already (ReasonInstances).
type InvalidError struct {
	// Reason is one of the Reason constants, for counting.
	Reason string
	// Detail says what exactly.
	Detail string
}

func (e *InvalidError) Error() string {
	if e.Detail == "" {
		return "pathway aggregate: " + e.Reason
	}
	return "pathway aggregate: " + e.Reason + ": " + e.Detail
}

func invalid(reason, format string, args ...any) error {
	return &InvalidError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// wireWindow is a Window as JSON.
type wireWindow struct {
	Version  int          `json:"v"`
	Service  string       `json:"service"`
	Instance string       `json:"instance"`
	Start    time.Time    `json:"start"`
	End      time.Time    `json:"end"`
	Interval int64        `json:"interval_ns"`
	Series   []wireSeries `json:"series"`
	Feeds    []wireFeed   `json:"feeds,omitempty"`
	// Final is absent from the records of earlier releases.
	Final bool `json:"final,omitempty"`
}

type wireSeries struct {
	Service   string    `json:"service"`
	Group     string    `json:"group,omitempty"`
	Topic     string    `json:"topic"`
	Direction string    `json:"direction"`
	Hash      string    `json:"hash"`
	Parent    string    `json:"parent"`
	Total     uint64    `json:"total"`
	Edge      wireHisto `json:"edge"`
	Origin    wireHisto `json:"origin"`
	// Cohorts are absent from the records of earlier releases.
	Cohorts *wireCohorts `json:"cohorts,omitempty"`
}

type wireHisto struct {
	Count     uint64   `json:"count"`
	Sum       int64    `json:"sum_ns"`
	ZeroCount uint64   `json:"zero_count,omitempty"`
	Offset    int      `json:"offset"`
	Buckets   []uint64 `json:"buckets,omitempty"`
	// Exemplars are absent from the records of earlier releases, and
	// ignored by their readers.
	Exemplars []wireExemplar `json:"exemplars,omitempty"`
}

type wireExemplar struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
	Value   int64  `json:"value_ns"`
	Time    int64  `json:"time_ns"`
}

func toWire(s pathway.Snapshot) wireHisto {
	h := wireHisto{Count: s.Count, Sum: int64(s.Sum), ZeroCount: s.ZeroCount, Offset: s.Offset, Buckets: s.Buckets}
	for _, e := range s.Exemplars {
		h.Exemplars = append(h.Exemplars, wireExemplar{TraceID: e.TraceID.String(), SpanID: e.SpanID.String(), Value: int64(e.Value), Time: e.Time})
	}
	return h
}

// Encode returns the window as a record value. It fails when Decode would
// refuse the result.
func (w Window) Encode() ([]byte, error) {
	ww := wireWindow{
		Version: Version, Service: w.Service, Instance: w.Instance,
		Start: w.Start.UTC(), End: w.End.UTC(), Interval: int64(w.Interval),
		Series: make([]wireSeries, 0, len(w.Series)), Feeds: toWireFeeds(w.Feeds), Final: w.Final,
	}
	for _, s := range w.Series {
		ww.Series = append(ww.Series, wireSeries{
			Service: s.Checkpoint.Service, Group: s.Checkpoint.Group, Topic: s.Checkpoint.Topic,
			Direction: s.Checkpoint.Direction.String(),
			Hash:      pathway.HashString(s.Hash), Parent: pathway.HashString(s.Parent),
			Total: s.Total, Edge: toWire(s.Edge), Origin: toWire(s.Origin), Cohorts: toWireCohorts(s.Cohorts),
		})
	}
	b, err := json.Marshal(ww)
	if err != nil {
		return nil, fmt.Errorf("encode pathway aggregate: %w", err)
	}
	if _, err := Decode([]byte(w.Instance), b); err != nil {
		return nil, err
	}
	return b, nil
}

// Decode parses a record of the aggregate topic. The key must be the
// window's instance id. Any record it refuses yields an *InvalidError; a
// tombstone (nil value) yields one with ReasonTombstone.
func Decode(key, value []byte) (Window, error) {
	switch {
	case value == nil:
		return Window{}, &InvalidError{Reason: ReasonTombstone}
	case len(value) > MaxRecordBytes:
		return Window{}, invalid(ReasonTooLarge, "%d bytes, at most %d", len(value), MaxRecordBytes)
	}
	// Peek at the version first, so a later version is reported as such
	// rather than as whatever it changed.
	var v struct {
		Version json.RawMessage `json:"v"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return Window{}, invalid(ReasonMalformed, "%v", err)
	}
	if string(v.Version) != strconv.Itoa(Version) {
		return Window{}, invalid(ReasonVersion, "version %.20q, want %d", v.Version, Version)
	}
	var ww wireWindow
	dec := json.NewDecoder(bytes.NewReader(value))
	if err := dec.Decode(&ww); err != nil {
		return Window{}, invalid(ReasonMalformed, "%v", err)
	}
	if dec.More() {
		return Window{}, invalid(ReasonMalformed, "data after the object")
	}
	if err := checkName(ReasonWindow, "instance", ww.Instance); err != nil {
		return Window{}, err
	}
	if string(key) != ww.Instance {
		return Window{}, invalid(ReasonKey, "key %.64q, instance %.64q", key, ww.Instance)
	}
	if err := checkName(ReasonWindow, "service", ww.Service); err != nil {
		return Window{}, err
	}
	w := Window{Service: ww.Service, Instance: ww.Instance, Start: ww.Start, End: ww.End, Interval: time.Duration(ww.Interval), Final: ww.Final}
	if err := w.checkTimes(); err != nil {
		return Window{}, err
	}
	if len(ww.Series) > MaxSeries {
		return Window{}, invalid(ReasonTooMany, "%d series, at most %d", len(ww.Series), MaxSeries)
	}
	type seriesKey struct {
		cp           pathway.Checkpoint
		hash, parent uint64
	}
	seen := make(map[seriesKey]bool, len(ww.Series))
	w.Series = make([]Series, 0, len(ww.Series))
	exemplars, cohortBins := 0, 0
	for i, ws := range ww.Series {
		if ws.Cohorts != nil {
			if cohortBins += len(ws.Cohorts.Counts); cohortBins > MaxWindowCohortBins {
				return Window{}, invalid(ReasonCohorts, "over %d bins in the window", MaxWindowCohortBins)
			}
		}
		if exemplars += len(ws.Edge.Exemplars) + len(ws.Origin.Exemplars); exemplars > MaxWindowExemplars {
			return Window{}, invalid(ReasonExemplars, "over %d in the window", MaxWindowExemplars)
		}
		s, err := ws.series()
		if err != nil {
			var ie *InvalidError
			if errors.As(err, &ie) {
				ie.Detail = fmt.Sprintf("series %d: %s", i, ie.Detail)
			}
			return Window{}, err
		}
		if s.Cohorts, err = ws.Cohorts.cohorts(w.End); err != nil {
			var ie *InvalidError
			if errors.As(err, &ie) {
				ie.Detail = fmt.Sprintf("series %d: %s", i, ie.Detail)
			}
			return Window{}, err
		}
		if err := w.checkRate(s); err != nil {
			return Window{}, invalid(ReasonRate, "series %d: %v", i, err)
		}
		k := seriesKey{s.Checkpoint, s.Hash, s.Parent}
		if seen[k] {
			return Window{}, invalid(ReasonDuplicated, "series %d: %s %s", i, s.Checkpoint.Edge(), pathway.HashString(s.Hash))
		}
		seen[k] = true
		w.Series = append(w.Series, s)
	}
	var err error
	if w.Feeds, err = feedsOf(ww.Feeds); err != nil {
		return Window{}, err
	}
	return w, nil
}

// Plausible window times: between 2001 and 2200.
var (
	earliest = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

func (w Window) checkTimes() error {
	switch {
	case w.Start.Before(earliest) || w.End.After(latest):
		return invalid(ReasonWindow, "times %s to %s out of range", w.Start, w.End)
	case !w.End.After(w.Start):
		return invalid(ReasonWindow, "end %s not after start %s", w.End, w.Start)
	case w.End.Sub(w.Start) > MaxWindow:
		return invalid(ReasonWindow, "%s long, at most %s", w.End.Sub(w.Start), MaxWindow)
	case w.Interval < MinInterval || w.Interval > MaxInterval:
		return invalid(ReasonWindow, "interval %s not within %s and %s", w.Interval, MinInterval, MaxInterval)
	}
	return nil
}

// checkRate refuses a series claiming more than MaxRate records per
// second of the window (at least MinInterval long), so that no rate a
// View computes exceeds MaxRate per instance.
func (w Window) checkRate(s Series) error {
	secs := max(w.End.Sub(w.Start), MinInterval).Seconds()
	for _, n := range []uint64{s.Edge.Count, s.Origin.Count} {
		if float64(n) > MaxRate*secs {
			return fmt.Errorf("%d records in %s", n, w.End.Sub(w.Start))
		}
	}
	return nil
}

func (ws wireSeries) series() (Series, error) {
	s := Series{Checkpoint: pathway.Checkpoint{Service: ws.Service, Group: ws.Group, Topic: ws.Topic}, Total: ws.Total}
	if err := checkName(ReasonSeries, "service", ws.Service); err != nil {
		return s, err
	}
	if ws.Group != "" {
		if err := checkName(ReasonSeries, "group", ws.Group); err != nil {
			return s, err
		}
	}
	if err := checkTopic(ws.Topic); err != nil {
		return s, err
	}
	switch ws.Direction {
	case "in":
		s.Checkpoint.Direction = pathway.In
	case "out":
		s.Checkpoint.Direction = pathway.Out
	case "expired":
		s.Checkpoint.Direction = pathway.Expired
	default:
		return s, invalid(ReasonSeries, "direction %.20q", ws.Direction)
	}
	var err error
	if s.Hash, err = parseHash("hash", ws.Hash); err != nil {
		return s, err
	}
	if s.Parent, err = parseHash("parent", ws.Parent); err != nil {
		return s, err
	}
	if s.Hash == 0 && s.Parent != 0 {
		return s, invalid(ReasonSeries, "hash 0 with a parent")
	}
	if ws.Total > MaxCount {
		return s, invalid(ReasonSeries, "total %d over %d", ws.Total, uint64(MaxCount))
	}
	if s.Edge, err = ws.Edge.snapshot("edge"); err != nil {
		return s, err
	}
	if s.Origin, err = ws.Origin.snapshot("origin"); err != nil {
		return s, err
	}
	return s, nil
}

func (h wireHisto) snapshot(what string) (pathway.Snapshot, error) {
	switch {
	case h.Count > MaxCount || h.ZeroCount > h.Count:
		return pathway.Snapshot{}, invalid(ReasonSeries, "%s: count %d, zero count %d", what, h.Count, h.ZeroCount)
	case h.Sum < 0:
		return pathway.Snapshot{}, invalid(ReasonSeries, "%s: negative sum", what)
	case len(h.Buckets) > maxBucket-minBucket+1:
		return pathway.Snapshot{}, invalid(ReasonSeries, "%s: %d buckets", what, len(h.Buckets))
	case len(h.Buckets) > 0 && (h.Offset < minBucket || h.Offset+len(h.Buckets)-1 > maxBucket):
		return pathway.Snapshot{}, invalid(ReasonSeries, "%s: buckets %d to %d outside %d to %d", what, h.Offset, h.Offset+len(h.Buckets)-1, minBucket, maxBucket)
	}
	n := h.ZeroCount
	for _, c := range h.Buckets {
		if c > MaxCount {
			return pathway.Snapshot{}, invalid(ReasonSeries, "%s: bucket count %d", what, c)
		}
		n += c // at most 528 * 2^48: no overflow
	}
	if n != h.Count {
		return pathway.Snapshot{}, invalid(ReasonSeries, "%s: count %d, buckets hold %d", what, h.Count, n)
	}
	s := pathway.Snapshot{Count: h.Count, Sum: time.Duration(h.Sum), ZeroCount: h.ZeroCount}
	if len(h.Buckets) > 0 {
		s.Offset, s.Buckets = h.Offset, h.Buckets
	}
	if len(h.Exemplars) > MaxExemplars {
		return pathway.Snapshot{}, invalid(ReasonExemplars, "%s: %d, at most %d", what, len(h.Exemplars), MaxExemplars)
	}
	for i, we := range h.Exemplars {
		e, err := we.exemplar()
		if err != nil {
			return pathway.Snapshot{}, invalid(ReasonSeries, "%s: exemplar %d: %v", what, i, err)
		}
		s.Exemplars = append(s.Exemplars, e)
	}
	return s, nil
}

func (we wireExemplar) exemplar() (pathway.Exemplar, error) {
	e := pathway.Exemplar{Value: time.Duration(we.Value), Time: we.Time}
	switch {
	case we.Value < 0:
		return e, errors.New("negative value")
	case we.Time < earliest.UnixNano() || we.Time > latest.UnixNano():
		return e, fmt.Errorf("time %d out of range", we.Time)
	case !isLowerHex(we.TraceID, 32) || !isLowerHex(we.SpanID, 16):
		return e, fmt.Errorf("trace id %.40q, span id %.20q: want 32 and 16 hexadecimal digits", we.TraceID, we.SpanID)
	}
	// Lower-case hexadecimal digits of the right length: no error.
	_, _ = hex.Decode(e.TraceID[:], []byte(we.TraceID))
	_, _ = hex.Decode(e.SpanID[:], []byte(we.SpanID))
	if !e.TraceID.IsValid() || !e.SpanID.IsValid() {
		return e, errors.New("zero trace or span id")
	}
	return e, nil
}

// isLowerHex reports whether s is n lower-case hexadecimal digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func parseHash(what, s string) (uint64, error) {
	if !isLowerHex(s, 16) {
		return 0, invalid(ReasonSeries, "%s %.20q: want 16 hexadecimal digits", what, s)
	}
	h, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, invalid(ReasonSeries, "%s: %v", what, err)
	}
	return h, nil
}

// checkName accepts a non-empty name of at most MaxNameBytes valid UTF-8
// without control or format characters (escape sequences, bidirectional
// overrides): names are printed on terminals.
func checkName(reason, what, s string) error {
	switch {
	case s == "":
		return invalid(reason, "empty %s", what)
	case len(s) > MaxNameBytes:
		return invalid(reason, "%s of %d bytes, at most %d", what, len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return invalid(reason, "%s is not UTF-8", what)
	}
	if strings.ContainsFunc(s, termsafe.Unsafe) {
		return invalid(reason, "%s %+q has a control or format character", what, s)
	}
	return nil
}

// checkTopic accepts a legal Kafka topic name.
func checkTopic(s string) error {
	if s == "" || len(s) > maxTopicBytes || s == "." || s == ".." {
		return invalid(ReasonSeries, "topic %+.64q", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return invalid(ReasonSeries, "topic %+.64q", s)
		}
	}
	return nil
}
