// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestLimit(t *testing.T) {
	const canary = "canary-8d1e"
	limits := Limits{MaxRecordBytes: 100, MaxHeaders: 3, MaxHeaderBytes: 50}
	hdr := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	tests := []struct {
		name   string
		limits Limits
		rec    *kgo.Record
		want   string // "" when the record passes
	}{
		{"within", limits, &kgo.Record{Key: []byte("k"), Value: []byte(strings.Repeat("v", 99)), Headers: []kgo.RecordHeader{hdr("a", "1"), hdr("b", "2"), hdr("c", "3")}}, ""},
		{"value too large", limits, &kgo.Record{Value: []byte(canary + strings.Repeat("v", 101))}, "record key and value: 112 bytes, over the limit of 100"},
		{"key counts", limits, &kgo.Record{Key: []byte(canary), Value: []byte(strings.Repeat("v", 90))}, "record key and value: 101 bytes, over the limit of 100"},
		{"too many headers", limits, &kgo.Record{Headers: []kgo.RecordHeader{hdr("a", ""), hdr("b", ""), hdr("c", ""), hdr(canary, "")}}, "record headers: 4 headers, over the limit of 3"},
		{"headers too large", limits, &kgo.Record{Headers: []kgo.RecordHeader{hdr("baggage", canary+strings.Repeat("x", 40))}}, "record headers: 58 bytes, over the limit of 50"},
		{"zero means no limit", Limits{}, &kgo.Record{Value: make([]byte, 10<<20), Headers: make([]kgo.RecordHeader, 1000)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			h := Chain(func(context.Context, *Message) ([]*kgo.Record, error) {
				called = true
				return nil, nil
			}, Limit(tt.limits))
			_, err := h(t.Context(), &Message{Record: tt.rec, Attempt: 1})
			if tt.want == "" {
				if err != nil || !called {
					t.Fatalf("err %v, handler called %v", err, called)
				}
				return
			}
			if called {
				t.Error("the handler saw a record beyond the limits")
			}
			if err == nil || !IsPermanent(err) || err.Error() != tt.want {
				t.Fatalf("err %v, want a permanent %q", err, tt.want)
			}
		})
	}
}

func TestConfigLimitsDefaultsAndValidation(t *testing.T) {
	c := Config{Group: "g", Topic: "t"}.withDefaults()
	if c.MaxRecordBytes != 1<<20 || c.MaxHeaders != 64 || c.MaxHeaderBytes != 64<<10 || c.MaxDeadLetterBytes != 1_000_000 {
		t.Fatalf("defaults %+v", c)
	}
	for _, bad := range []Config{
		{Group: "g", Topic: "t", MaxRecordBytes: -1},
		{Group: "g", Topic: "t", MaxHeaders: -1},
		{Group: "g", Topic: "t", MaxHeaderBytes: -1},
		{Group: "g", Topic: "t", MaxDeadLetterBytes: -1},
		{Group: "g", Topic: "t", MaxDeadLetterBytes: 100},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
