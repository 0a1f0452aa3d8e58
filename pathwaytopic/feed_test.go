// SPDX-License-Identifier: Apache-2.0

package pathwaytopic

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker/brokertest"
)

// feedWindow is testWindow with the feeds of a worker's two indexes.
func feedWindow() Window {
	w := testWindow()
	w.Feeds = []Feed{
		{Name: "enrichment", Topic: "retrieval.documents", Offsets: map[int32]int64{0: 12, 1: 0}, Documents: 9, Ready: false},
		{Name: "retrieval", Topic: "retrieval.documents", Offsets: map[int32]int64{0: 12, 1: 30}, Newest: t0.Add(-time.Second), Documents: 40, Ready: true},
	}
	return w
}

func TestFeedsRoundTrip(t *testing.T) {
	b, m := roundTrip(t, feedWindow())
	f := m["feeds"].([]any)[1].(map[string]any)
	if f["name"] != "retrieval" || f["topic"] != "retrieval.documents" || f["offsets"].(map[string]any)["1"] != 30.0 ||
		f["newest"] != "2026-03-04T05:06:06Z" || f["documents"] != 40.0 || f["ready"] != true {
		t.Fatalf("record %s", b)
	}
	if _, ok := m["feeds"].([]any)[0].(map[string]any)["newest"]; ok {
		t.Errorf("a feed with no newest record carries one: %s", b)
	}
	if got := feedWindow().Feeds[1].Position(); got != 42 {
		t.Errorf("Position() = %d, want 42", got)
	}
	// A window without feeds has none in its record.
	if _, m := roundTrip(t, testWindow()); m["feeds"] != nil {
		t.Errorf("feeds in a window without: %v", m["feeds"])
	}
}

func TestDecodeRefusesHostileFeeds(t *testing.T) {
	key := []byte(feedWindow().Instance)
	setFeed := func(k string, v any) func(map[string]any) {
		return func(m map[string]any) { m["feeds"].([]any)[0].(map[string]any)[k] = v }
	}
	tests := []struct {
		name   string
		value  []byte
		reason string
	}{
		{"no name", hostileOf(t, feedWindow(), setFeed("name", "")), ReasonFeed},
		{"escape in the name", hostileOf(t, feedWindow(), setFeed("name", "retrieval\x1b[2J")), ReasonFeed},
		{"illegal topic", hostileOf(t, feedWindow(), setFeed("topic", "a topic")), ReasonFeed},
		{"negative partition", hostileOf(t, feedWindow(), setFeed("offsets", map[string]any{"-1": 3})), ReasonFeed},
		{"partition not a number", hostileOf(t, feedWindow(), setFeed("offsets", map[string]any{"x": 3})), ReasonFeed},
		{"partition with a sign", hostileOf(t, feedWindow(), setFeed("offsets", map[string]any{"+1": 3})), ReasonFeed},
		{"partition beyond int32", hostileOf(t, feedWindow(), setFeed("offsets", map[string]any{"4294967296": 3})), ReasonFeed},
		{"negative offset", hostileOf(t, feedWindow(), setFeed("offsets", map[string]any{"0": -3})), ReasonFeed},
		{"too many partitions", hostileOf(t, feedWindow(), func(m map[string]any) {
			offsets := map[string]any{}
			for p := range MaxFeedPartitions + 1 {
				offsets[strconv.Itoa(p)] = 1
			}
			m["feeds"].([]any)[0].(map[string]any)["offsets"] = offsets
		}), ReasonFeed},
		{"negative documents", hostileOf(t, feedWindow(), setFeed("documents", -1)), ReasonFeed},
		{"newest in 1970", hostileOf(t, feedWindow(), setFeed("newest", "1970-01-01T00:00:01Z")), ReasonFeed},
		{"the same feed twice", hostileOf(t, feedWindow(), func(m map[string]any) {
			f := m["feeds"].([]any)
			m["feeds"] = append(f, f[0])
		}), ReasonFeed},
		{"too many feeds", hostileOf(t, feedWindow(), func(m map[string]any) {
			f := m["feeds"].([]any)
			m["feeds"] = append(f, make([]any, MaxFeeds)...)
		}), ReasonFeed},
		{"offsets as a list", hostileOf(t, feedWindow(), setFeed("offsets", []int{1, 2})), ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(key, tt.value)
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason != tt.reason {
				t.Fatalf("err = %v, want reason %q", err, tt.reason)
			}
			if strings.ContainsAny(err.Error(), "\x1b\n") {
				t.Errorf("the error carries the record's control characters: %q", err)
			}
		})
	}
	w := feedWindow()
	w.Feeds[0].Offsets[-2] = 1
	if _, err := w.Encode(); err == nil {
		t.Error("Encode of a feed with a negative partition: no error")
	}
}

// TestPublisherPublishesFeeds: a Publisher given WithFeeds puts what the
// function returns at each publish in its window, and a Reader's view
// carries them on the instance.
func TestPublisherPublishesFeeds(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	cl := newClient(t, b.Addr())
	if err := EnsureTopic(t.Context(), cl, -1, DefaultTopic); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: t0}
	applied := int64(5)
	p, err := NewPublisher(cl, &fakeSource{}, WithInstance("w-1"), withClock(clk.now), WithFeeds(func() []Feed {
		return []Feed{{Name: "retrieval", Topic: "retrieval.documents", Offsets: map[int32]int64{0: applied}, Documents: applied, Ready: true}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	if err := p.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	applied = 9
	clk.advance(time.Second)
	if err := p.Publish(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, b.Addr(), withClock(clk.now))
	v := catchUp(t, r)
	if len(v.Instances) != 1 || len(v.Instances[0].Feeds) != 1 {
		t.Fatalf("instances %+v, want one with one feed", v.Instances)
	}
	if f := v.Instances[0].Feeds[0]; f.Name != "retrieval" || f.Offsets[0] != 9 || f.Documents != 9 || !f.Ready {
		t.Errorf("feed %+v, want the second publish's", f)
	}
}
