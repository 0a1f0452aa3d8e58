// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/pathway"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// snapshot returns the snapshot of a histogram holding the given
// durations (0 counts as a zero).
func snapshot(ds ...time.Duration) pathway.Snapshot {
	var h pathway.Histogram
	for _, d := range ds {
		h.Record(d, trace.SpanContext{}, 0)
	}
	return h.Snapshot()
}

func cp(service, group, topic string, d pathway.Direction) pathway.Checkpoint {
	return pathway.Checkpoint{Service: service, Group: group, Topic: topic, Direction: d}
}

// t0Bin is the origin bin t0 falls in.
var t0Bin = t0.Unix() - t0.Unix()%5

// testWindow is a valid window of two series.
func testWindow() Window {
	return Window{
		Service: "kretrieve-retrieval", Instance: "kretrieve-retrieval@h/1-abcdef",
		Start: t0, End: t0.Add(10 * time.Second), Interval: 10 * time.Second,
		Series: []Series{
			{Checkpoint: cp("kretrieve-retrieval", "retrieval", "retrieval.requests", pathway.In), Hash: 0x1234, Parent: 0xfeed, Total: 7,
				Edge: snapshot(0, time.Millisecond, 3*time.Millisecond), Origin: snapshot(2*time.Millisecond, 4*time.Millisecond, time.Second),
				Cohorts: []pathway.CohortCount{{Bin: t0Bin, Count: 4}, {Bin: t0Bin + 10, Count: 3}}},
			{Checkpoint: cp("kretrieve-retrieval", "retrieval", "retrieval.candidates", pathway.Out), Hash: 0x5678, Parent: 0x1234, Total: 3,
				Edge: snapshot(20 * time.Microsecond), Origin: snapshot(5 * time.Millisecond)},
		},
	}
}

// roundTrip encodes w, checks it decodes as w, and returns the record
// and its JSON form.
func roundTrip(t *testing.T, w Window) ([]byte, map[string]any) {
	t.Helper()
	b, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode([]byte(w.Instance), b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, w)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return b, m
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	// The format is the documented one.
	b, m := roundTrip(t, testWindow())
	s := m["series"].([]any)[0].(map[string]any)
	if m["v"] != 1.0 || m["interval_ns"] != 1e10 || m["start"] != "2026-03-04T05:06:07Z" || s["hash"] != "0000000000001234" ||
		s["parent"] != "000000000000feed" || s["direction"] != "in" || s["edge"].(map[string]any)["zero_count"] != 1.0 {
		t.Fatalf("record %s", b)
	}
	// Origin-time counts: dense from the first bin with records.
	if c, _ := json.Marshal(s["cohorts"]); string(c) != fmt.Sprintf(`{"counts":[4,0,3],"start":%d}`, t0Bin) {
		t.Errorf("cohorts %s", c)
	}
}

// hostile edits the JSON form of testWindow.
func hostile(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	return hostileOf(t, testWindow(), edit)
}

// hostileOf edits the JSON form of w.
func hostileOf(t *testing.T, w Window, edit func(m map[string]any)) []byte {
	t.Helper()
	b, err := w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func series0(m map[string]any) map[string]any { return m["series"].([]any)[0].(map[string]any) }

func TestDecodeRefusesHostileRecords(t *testing.T) {
	key := []byte(testWindow().Instance)
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	setSeries := func(k string, v any) func(map[string]any) { return func(m map[string]any) { series0(m)[k] = v } }
	setEdge := func(k string, v any) func(map[string]any) {
		return func(m map[string]any) { series0(m)["edge"].(map[string]any)[k] = v }
	}
	tests := []struct {
		name   string
		key    []byte
		value  []byte
		reason string
	}{
		{"tombstone", key, nil, ReasonTombstone},
		{"too large", key, bytes.Repeat([]byte(" "), MaxRecordBytes+1), ReasonTooLarge},
		{"not JSON", key, []byte("\x00\xff{"), ReasonMalformed},
		{"an array", key, []byte(`[1,2]`), ReasonMalformed},
		{"data after the object", key, append(hostile(t, func(map[string]any) {}), []byte(` {}`)...), ReasonMalformed},
		{"no version", key, hostile(t, func(m map[string]any) { delete(m, "v") }), ReasonVersion},
		{"next version", key, hostile(t, set("v", 2)), ReasonVersion},
		{"version as a string", key, hostile(t, set("v", "1")), ReasonVersion},
		{"key is not the instance", []byte("someone-else"), hostile(t, func(map[string]any) {}), ReasonKey},
		{"no key", nil, hostile(t, func(map[string]any) {}), ReasonKey},
		{"empty instance", nil, hostile(t, set("instance", "")), ReasonWindow},
		{"escape sequence in the service", key, hostile(t, set("service", "kretrieve\x1b[2J")), ReasonWindow},
		{"long service", key, hostile(t, set("service", strings.Repeat("s", MaxNameBytes+1))), ReasonWindow},
		{"end before start", key, hostile(t, set("end", "2026-03-04T05:06:06Z")), ReasonWindow},
		{"in 1970", key, hostile(t, set("start", "1970-01-01T00:00:00Z")), ReasonWindow},
		{"window of a year", key, hostile(t, set("end", "2027-03-04T05:06:07Z")), ReasonWindow},
		{"no interval", key, hostile(t, set("interval_ns", 0)), ReasonWindow},
		{"interval of a day", key, hostile(t, set("interval_ns", 864e11)), ReasonWindow},
		{"bidi override in the group", key, hostile(t, setSeries("group", "retrieval\u202e")), ReasonSeries},
		{"newline in the checkpoint's service", key, hostile(t, setSeries("service", "a\nb")), ReasonSeries},
		{"illegal topic", key, hostile(t, setSeries("topic", "retrieval requests")), ReasonSeries},
		{"empty topic", key, hostile(t, setSeries("topic", "")), ReasonSeries},
		{"direction", key, hostile(t, setSeries("direction", "sideways")), ReasonSeries},
		{"short hash", key, hostile(t, setSeries("hash", "1234")), ReasonSeries},
		{"upper-case hash", key, hostile(t, setSeries("hash", "000000000000ABCD")), ReasonSeries},
		{"signed hash", key, hostile(t, setSeries("parent", "-000000000000001")), ReasonSeries},
		{"overflow hash with a parent", key, hostile(t, setSeries("hash", "0000000000000000")), ReasonSeries},
		{"huge total", key, hostile(t, setSeries("total", uint64(MaxCount)+1)), ReasonSeries},
		{"count not the buckets'", key, hostile(t, setEdge("count", 4)), ReasonSeries},
		{"zeros over the count", key, hostile(t, setEdge("zero_count", 9)), ReasonSeries},
		{"negative sum", key, hostile(t, setEdge("sum_ns", -1)), ReasonSeries},
		{"bucket below the range", key, hostile(t, setEdge("offset", -100000)), ReasonSeries},
		{"bucket above the range", key, hostile(t, setEdge("offset", 1<<30)), ReasonSeries},
		{"offset beyond int", key, hostile(t, setEdge("offset", 1e30)), ReasonMalformed},
		{"negative bucket", key, hostile(t, setEdge("buckets", []int{1, -1})), ReasonMalformed},
		{"too many buckets", key, hostile(t, func(m map[string]any) {
			e := series0(m)["edge"].(map[string]any)
			e["buckets"], e["count"], e["zero_count"], e["offset"] = make([]int, 600), 0, 0, -336
		}), ReasonSeries},
		{"huge bucket", key, hostile(t, func(m map[string]any) {
			e := series0(m)["edge"].(map[string]any)
			e["buckets"], e["count"], e["zero_count"] = []uint64{1 << 63, 1 << 63}, 0, 0
		}), ReasonSeries},
		{"cohorts not on a bin", key, hostile(t, setSeries("cohorts", map[string]any{"start": t0Bin + 1, "counts": []int{1}})), ReasonCohorts},
		{"no cohort counts", key, hostile(t, setSeries("cohorts", map[string]any{"start": t0Bin, "counts": []int{}})), ReasonCohorts},
		{"too many cohort bins", key, hostile(t, setSeries("cohorts", map[string]any{"start": t0Bin - 3600, "counts": make([]int, MaxCohortBins+1)})), ReasonCohorts},
		{"cohorts from the future", key, hostile(t, setSeries("cohorts", map[string]any{"start": t0Bin + 3600, "counts": []int{1}})), ReasonCohorts},
		{"cohorts from 1970", key, hostile(t, setSeries("cohorts", map[string]any{"start": 0, "counts": []int{1}})), ReasonCohorts},
		{"huge cohort count", key, hostile(t, setSeries("cohorts", map[string]any{"start": t0Bin, "counts": []uint64{MaxCount + 1}})), ReasonCohorts},
		{"negative cohort count", key, hostile(t, setSeries("cohorts", map[string]any{"start": t0Bin, "counts": []int{-1}})), ReasonMalformed},
		{"too many series", key, hostile(t, func(m map[string]any) {
			s := m["series"].([]any)
			m["series"] = append(s, make([]any, MaxSeries)...)
		}), ReasonTooMany},
		{"null series", key, hostile(t, func(m map[string]any) { m["series"] = []any{nil} }), ReasonSeries},
		{"duplicate series", key, hostile(t, func(m map[string]any) {
			s := m["series"].([]any)
			m["series"] = append(s, s[0])
		}), ReasonDuplicated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.key, tt.value)
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason != tt.reason {
				t.Fatalf("err = %v, want reason %q", err, tt.reason)
			}
			if strings.ContainsAny(err.Error(), "\x1b\n\u202e") {
				t.Errorf("the error carries the record's control characters: %q", err)
			}
		})
	}
}

func TestEncodeRefusesWhatDecodeWould(t *testing.T) {
	w := testWindow()
	w.Series[1].Checkpoint.Topic = "bad topic"
	if _, err := w.Encode(); err == nil {
		t.Fatal("a window with an illegal topic encoded")
	}
	w = testWindow()
	w.End = w.Start
	if _, err := w.Encode(); err == nil {
		t.Fatal("an empty window encoded")
	}
}

func FuzzDecode(f *testing.F) {
	good, err := testWindow().Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(testWindow().Instance), good)
	f.Add([]byte("x"), []byte(`{"v":1,"instance":"x"}`))
	f.Add([]byte("x"), []byte(`{"v":1,"service":"s","instance":"x","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:01Z","interval_ns":1000000000,"series":[{"service":"s","topic":"t","direction":"out","hash":"0000000000000000","parent":"0000000000000000","edge":{"count":1,"offset":-336,"buckets":[1]},"origin":{"count":0,"offset":0}}]}`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		w, err := Decode(key, value)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InvalidError: %v", err)
			}
			return
		}
		// What Decode accepts encodes, decodes to the same and merges.
		b, err := w.Encode()
		if err != nil {
			t.Fatalf("accepted window does not encode: %v", err)
		}
		w2, err := Decode(key, b)
		if err != nil || fmt.Sprint(w2) != fmt.Sprint(w) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, w2, w)
		}
		v := Merge([]Window{w, w2}, w.End, 0)
		for _, r := range v.Rows {
			_ = r.Latency.Quantile(0.99)
			_ = r.Origin.Quantile(0.5)
		}
	})
}

// sampled returns a sampled span context with ids derived from n.
func sampled(n int) trace.SpanContext {
	var tid trace.TraceID
	var sid trace.SpanID
	tid[0], tid[15], sid[7] = 0xab, byte(n), byte(n+1)
	tid[14], sid[6] = byte(n>>8), byte(n>>8)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
}

// exemplified returns the snapshot of a histogram holding one sampled
// measurement per given duration, the n-th at t0 plus n seconds.
func exemplified(first int, ds ...time.Duration) pathway.Snapshot {
	var h pathway.Histogram
	for i, d := range ds {
		h.Record(d, sampled(first+i), t0.Add(time.Duration(first+i)*time.Second).UnixNano())
	}
	return h.Snapshot()
}

func TestExemplarsRoundTrip(t *testing.T) {
	plain, err := testWindow().Encode()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte("exemplars")) {
		t.Errorf("a window without exemplars has an exemplars field, unlike the records of earlier releases: %s", plain)
	}
	w := testWindow()
	w.Series[0].Edge = exemplified(1, 0, time.Millisecond, 3*time.Second)
	w.Series[0].Origin = exemplified(4, 2*time.Millisecond)
	if len(w.Series[0].Edge.Exemplars) != 3 {
		t.Fatalf("exemplars %+v", w.Series[0].Edge.Exemplars)
	}
	b, m := roundTrip(t, w)
	ex := series0(m)["edge"].(map[string]any)["exemplars"].([]any)[2].(map[string]any)
	if ex["trace_id"] != "ab000000000000000000000000000003" || ex["span_id"] != "0000000000000004" || ex["value_ns"] != 3e9 ||
		ex["time_ns"] != float64(t0.Add(3*time.Second).UnixNano()) {
		t.Errorf("exemplar %v", ex)
	}
	t.Logf("record of two series: %d bytes without exemplars, %d with 4", len(plain), len(b))

	// Exemplars a record may not carry.
	key := []byte(w.Instance)
	setEx := func(k string, v any) func(map[string]any) {
		return func(m map[string]any) {
			series0(m)["edge"].(map[string]any)["exemplars"].([]any)[0].(map[string]any)[k] = v
		}
	}
	hostileEx := func(edit func(map[string]any)) []byte { return hostileOf(t, w, edit) }
	for _, tt := range []struct {
		name   string
		value  []byte
		reason string
	}{
		{"zero trace id", hostileEx(setEx("trace_id", strings.Repeat("0", 32))), ReasonSeries},
		{"short trace id", hostileEx(setEx("trace_id", "ab")), ReasonSeries},
		{"upper-case trace id", hostileEx(setEx("trace_id", "AB000000000000000000000000000001")), ReasonSeries},
		{"escape in the span id", hostileEx(setEx("span_id", "\x1b[2J000000000000")), ReasonSeries},
		{"zero span id", hostileEx(setEx("span_id", strings.Repeat("0", 16))), ReasonSeries},
		{"negative value", hostileEx(setEx("value_ns", -1)), ReasonSeries},
		{"in 1970", hostileEx(setEx("time_ns", 1)), ReasonSeries},
		{"trace id as a number", hostileEx(setEx("trace_id", 12)), ReasonMalformed},
		{"too many in a histogram", hostileEx(func(m map[string]any) {
			e := series0(m)["edge"].(map[string]any)
			ex := e["exemplars"].([]any)
			for len(ex) <= MaxExemplars {
				ex = append(ex, ex[0])
			}
			e["exemplars"] = ex
		}), ReasonExemplars},
		{"too many in the window", hostileEx(func(m map[string]any) {
			s := m["series"].([]any)
			for i := 2; len(s)*MaxExemplars <= MaxWindowExemplars+MaxExemplars; i++ {
				c := map[string]any{}
				for k, v := range series0(m) {
					c[k] = v
				}
				c["hash"] = fmt.Sprintf("%016x", i)
				e := map[string]any{}
				for k, v := range c["edge"].(map[string]any) {
					e[k] = v
				}
				e["exemplars"] = slicesRepeat(e["exemplars"].([]any)[0], MaxExemplars)
				c["edge"] = e
				s = append(s, c)
			}
			m["series"] = s
		}), ReasonExemplars},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(key, tt.value)
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason != tt.reason {
				t.Fatalf("err = %v, want reason %q", err, tt.reason)
			}
			if strings.ContainsAny(err.Error(), "\x1b") {
				t.Errorf("the error carries the record's control characters: %q", err)
			}
		})
	}
}

func slicesRepeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}
