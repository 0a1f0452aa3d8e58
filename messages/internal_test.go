// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseInteger(t *testing.T) {
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"10", 10, true},
		{"-7", -7, true},
		{"10.0", 10, true},
		{"1e1", 10, true},
		{"1E+2", 100, true},
		{"1000e-1", 100, true},
		{"0.0e5", 0, true},
		{"-2.50e1", -25, true},
		{"123456789012345678", 123456789012345678, true},
		{"1234567890123456789", math.MaxInt64, true},
		{"-1234567890123456789", -math.MaxInt64, true},
		{"1e400", math.MaxInt64, true},
		{"1e99999999999999999999", math.MaxInt64, true},
		{"2.5", 0, false},
		{"1e-1", 0, false},
		{"1e-99999999999999999999", 0, false},
		{"10.000000000000000000001", 0, false},
		{`"10"`, 0, false},
		{"true", 0, false},
		{"null", 0, false},
		{"{}", 0, false},
		{"1.", 0, false},
		{"1e", 0, false},
		{"-", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseInteger([]byte(tt.in))
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Errorf("parseInteger(%s) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestEncodeULID(t *testing.T) {
	tests := []struct {
		name string
		id   [16]byte
		want string
	}{
		{"zero", [16]byte{}, "00000000000000000000000000"},
		{"max", [16]byte{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff, 8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{"last bit", [16]byte{15: 1}, "00000000000000000000000001"},
		{"last five bits", [16]byte{15: 0x1f}, "0000000000000000000000000Z"},
		{"first bit", [16]byte{0: 0x80}, "40000000000000000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodeULID(tt.id); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNewRequestIDTimestamp(t *testing.T) {
	before := time.Now().UnixMilli()
	id := NewRequestID()
	after := time.Now().UnixMilli()
	// The first 10 characters hold the 48-bit millisecond timestamp.
	var ms int64
	for _, c := range id[:10] {
		i := strings.IndexRune(crockford, c)
		if i < 0 {
			t.Fatalf("id %q has %q outside the alphabet", id, c)
		}
		ms = ms<<5 | int64(i)
	}
	if ms < before || ms > after {
		t.Errorf("id %s holds time %d, want between %d and %d", id, ms, before, after)
	}
}

// FuzzScanObject checks scanObject and scanArray against encoding/json on
// valid JSON: the same members (last one wins) with the same raw values.
func FuzzScanObject(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"a":1,"b":[1,{"c":"d\"}"}],"a":{"x":null}, "\u0071" : "\\" }`))
	f.Add([]byte(` [ 1 , "two" , [ ] , { } , -3.5e+2 , true , false , null ] `))
	f.Add([]byte(`{"query":"x","top_k":10,"nested":{"deep":[[[]]]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		b = bytes.Trim(b, " \t\r\n")
		if !json.Valid(b) {
			return
		}
		var want map[string]json.RawMessage
		isObject := json.Unmarshal(b, &want) == nil && want != nil
		obj, ok := scanObject(b)
		if ok != isObject {
			t.Fatalf("scanObject(%s) ok = %v, encoding/json says %v", b, ok, isObject)
		}
		if ok {
			got := make(map[string]json.RawMessage)
			for _, m := range obj {
				if !utf8.Valid(m.name) {
					return // encoding/json replaces invalid UTF-8 in names
				}
				got[string(m.name)] = m.value
			}
			if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
				t.Fatalf("scanObject(%s) = %q, encoding/json says %q", b, got, want)
			}
		}
		var wantItems []json.RawMessage
		isArray := b[0] == '[' && json.Unmarshal(b, &wantItems) == nil
		items, ok := scanArray(b)
		if ok != isArray || len(items) != len(wantItems) {
			t.Fatalf("scanArray(%s) = %q, %v; encoding/json says %q, %v", b, items, ok, wantItems, isArray)
		}
		for i := range items {
			if !bytes.Equal(items[i], wantItems[i]) {
				t.Fatalf("scanArray(%s)[%d] = %s, encoding/json says %s", b, i, items[i], wantItems[i])
			}
		}
	})
}
