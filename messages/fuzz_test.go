// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

// FuzzDecodeRequest checks that DecodeRequest never panics, that it
// rejects only with ErrInvalid errors, and that every request it accepts
// is valid and survives an encode and decode unchanged.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"query":"x"}`))
	f.Add([]byte(`{"schema_version":1,"request_id":"r-1","query":"kafka lag","top_k":5}`))
	f.Add([]byte(`{"query":"caf\u00e9 \ud800","top_k":1e1,"extra":[{}]}`))
	f.Add([]byte(`{"query":"\u3000","request_id":" x"}`))
	f.Add([]byte("{\"query\":\"\xff\"}"))
	f.Add([]byte(`{"query":"x","top_k":-0.0e-0}`))
	f.Add([]byte(`[null]`))
	for _, tc := range requestCases() {
		if len(tc.body) < 512 {
			f.Add([]byte(tc.body))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := messages.DecodeRequest(body)
		if err != nil {
			if !errors.Is(err, messages.ErrInvalid) || messages.Reason(err) == "" {
				t.Fatalf("error %v (%T) is not an ErrInvalid with a reason", err, err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted %+v fails Validate: %v", r, err)
		}
		enc, err := messages.EncodeRequest(r)
		if err != nil {
			t.Fatalf("accepted %+v does not encode: %v", r, err)
		}
		again, err := messages.DecodeRequest(enc)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", enc, err)
		}
		if again != r {
			t.Fatalf("round trip changed %+v into %+v", r, again)
		}
	})
}

// FuzzDecodeCandidates checks the same properties for candidates.
func FuzzDecodeCandidates(f *testing.F) {
	for _, tc := range candidatesCases() {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := messages.DecodeCandidates(body)
		if err != nil {
			if !errors.Is(err, messages.ErrInvalid) {
				t.Fatalf("error %v (%T) is not an ErrInvalid", err, err)
			}
			return
		}
		enc, err := messages.EncodeCandidates(c)
		if err != nil {
			t.Fatalf("accepted %+v does not encode: %v", c, err)
		}
		again, err := messages.DecodeCandidates(enc)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", enc, err)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip changed %+v into %+v", c, again)
		}
	})
}

// FuzzDecodeResult checks the same properties for results.
func FuzzDecodeResult(f *testing.F) {
	for _, tc := range resultCases() {
		if len(tc.body) < 1024 {
			f.Add([]byte(tc.body))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := messages.DecodeResult(body)
		if err != nil {
			if !errors.Is(err, messages.ErrInvalid) {
				t.Fatalf("error %v (%T) is not an ErrInvalid", err, err)
			}
			return
		}
		enc, err := messages.EncodeResult(r)
		if err != nil {
			t.Fatalf("accepted %+v does not encode: %v", r, err)
		}
		again, err := messages.DecodeResult(enc)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", enc, err)
		}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("round trip changed %+v into %+v", r, again)
		}
	})
}
