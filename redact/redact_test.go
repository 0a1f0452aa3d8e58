// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
)

func TestRequest(t *testing.T) {
	generated := messages.NewRequestID()
	if kv := Request(generated); kv.Key != otelnames.RequestID || kv.Value.AsString() != generated {
		t.Errorf("Request(generated id) = %v, want %s=%s", kv, otelnames.RequestID, generated)
	}
	const chosen = "customer-42@example.com"
	kv := Request(chosen)
	if want := strconv.FormatUint(xxhash.Sum64String(chosen), 16); kv.Key != otelnames.RequestIDHash || kv.Value.AsString() != want {
		t.Errorf("Request(chosen id) = %v, want %s=%s", kv, otelnames.RequestIDHash, want)
	}
}

func TestQueryCarriesNoText(t *testing.T) {
	const q = "how do I parse a secret URL"
	kvs := Query(q)
	if len(kvs) != 2 || kvs[0].Key != otelnames.QueryLength || kvs[0].Value.AsInt64() != int64(len(q)) ||
		kvs[1].Key != otelnames.QueryHash || kvs[1].Value.AsString() != strconv.FormatUint(xxhash.Sum64String(q), 16) {
		t.Fatalf("Query = %v", kvs)
	}
	for _, kv := range kvs {
		if strings.Contains(kv.Value.String(), "secret") {
			t.Errorf("%s carries the query text: %s", kv.Key, kv.Value.String())
		}
	}
}
