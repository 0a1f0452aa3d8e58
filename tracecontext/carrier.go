// SPDX-License-Identifier: Apache-2.0

package tracecontext

import (
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// HeaderCarrier adapts a Kafka record's headers to
// propagation.TextMapCarrier.
//
// Unlike kotel's RecordCarrier it never leaves duplicates behind: Set removes
// every header with the key before appending the new value. When a record
// carries the same key more than once, Get returns the last value, as Kafka's
// Java client does with Headers.lastHeader, so a value appended by a later hop
// wins. It holds one pointer, so passing it as an interface does not
// allocate.
type HeaderCarrier struct {
	Record *kgo.Record
}

// Get returns the value of the last header named key, or "".
//
// The string shares the header's bytes instead of copying them (extraction
// runs for every consumed record): header values of fetched records are
// never modified, and Set replaces values rather than writing into them.
func (c HeaderCarrier) Get(key string) string {
	hs := c.Record.Headers
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Key == key {
			if len(hs[i].Value) == 0 {
				return ""
			}
			return unsafe.String(unsafe.SliceData(hs[i].Value), len(hs[i].Value))
		}
	}
	return ""
}

// Set replaces all headers named key with one header holding value.
func (c HeaderCarrier) Set(key, value string) {
	c.Remove(key)
	c.Record.Headers = append(c.Record.Headers, kgo.RecordHeader{Key: key, Value: []byte(value)})
}

// Keys returns the header keys in order, duplicates included.
func (c HeaderCarrier) Keys() []string {
	keys := make([]string, len(c.Record.Headers))
	for i, h := range c.Record.Headers {
		keys[i] = h.Key
	}
	return keys
}

// GetAll returns the values of every header named key, in order (Get
// returns the last of them). It is not named Values on purpose: a carrier
// with Values(string) []string is a propagation.ValuesGetter, from which
// OTel's propagators read and join every duplicate header, beyond the
// limits that Get and kafkatrace apply.
func (c HeaderCarrier) GetAll(key string) []string {
	var out []string
	for _, h := range c.Record.Headers {
		if h.Key == key {
			out = append(out, string(h.Value))
		}
	}
	return out
}

// Remove deletes every header whose key is one of keys, in place: the
// headers keep their order and backing array, and the slots freed at its
// end are cleared.
func (c HeaderCarrier) Remove(keys ...string) {
	hs := c.Record.Headers
	out := hs[:0]
	for _, h := range hs {
		drop := false
		for _, k := range keys {
			if h.Key == k {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, h)
		}
	}
	clear(hs[len(out):])
	c.Record.Headers = out
}
