// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// Reasons reported by the decoders for a field of the wrong JSON type.
const (
	reasonRequired = "required"
	reasonString   = "must be a string"
	reasonUTF8     = "must be valid utf-8"
	reasonInteger  = "must be an integer"
	reasonNumber   = "must be a number"
	reasonFinite   = "must be a finite number"
	reasonArray    = "must be an array"
	reasonBoolean  = "must be a boolean"
	reasonObject   = "must be an object"
)

var (
	errEmptyBody = errors.New("empty body")
	errNotObject = errors.New("not a json object")
)

// decodeObject checks that b holds exactly one JSON object and splits it
// into members.
func decodeObject(payload string, b []byte) (object, error) {
	b = bytes.Trim(b, " \t\r\n")
	if len(b) == 0 {
		return nil, &DecodeError{Payload: payload, Err: errEmptyBody}
	}
	if !validJSON(b) {
		// Decode again only to learn what is wrong, as a *json.SyntaxError.
		var raw json.RawMessage
		err := json.Unmarshal(b, &raw)
		if err == nil {
			err = errors.New("invalid json")
		}
		return nil, &DecodeError{Payload: payload, Err: err}
	}
	obj, ok := scanObject(b)
	if !ok {
		return nil, &DecodeError{Payload: payload, Err: errNotObject}
	}
	return obj, nil
}

// loc locates an object within a payload, to name fields in errors. The
// name is built only when a field fails.
type loc struct {
	parent string // "" for the top-level object
	index  int    // index within the parent array, or -1
}

var top = loc{index: -1}

func (l loc) field(key string) string {
	if l.parent == "" {
		return key
	}
	return l.name() + "." + key
}

// name returns the name of the located object itself, such as "timings"
// or "candidates[3]".
func (l loc) name() string {
	if l.index < 0 {
		return l.parent
	}
	return l.parent + "[" + strconv.Itoa(l.index) + "]"
}

// decoder reads typed fields out of objects and keeps the first failure.
// Once it has failed, further reads return zero values.
type decoder struct {
	payload string
	err     error
	// value is the whole record value and validUTF8 whether it is valid
	// UTF-8: when it is, strings need no check of their own.
	value     []byte
	validUTF8 bool
}

// newDecoder returns a decoder for the record value b.
func newDecoder(payload string, b []byte) decoder {
	return decoder{payload: payload, value: b, validUTF8: utf8.Valid(b)}
}

// result returns the first failure of the decoded fields or, when they are
// all fine, a [*DecodeError] for invalid UTF-8 elsewhere in the value (in
// a member name or in a member that is ignored): the contract is a UTF-8
// JSON object, and encoding/json would silently replace such bytes.
func (d *decoder) result() error {
	if d.err == nil && !d.validUTF8 {
		d.err = &DecodeError{Payload: d.payload, Err: &utf8Error{offset: invalidUTF8At(d.value)}}
	}
	return d.err
}

// invalidUTF8At returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence, or len(b).
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func (d *decoder) fail(field, reason string) {
	if d.err == nil {
		d.err = &ValidationError{Payload: d.payload, Field: field, Reason: reason}
	}
}

// get returns the raw value of key, or nil when the key is absent or null:
// a null member is read as an absent one.
func (d *decoder) get(obj object, l loc, key string, required bool) []byte {
	if d.err != nil {
		return nil
	}
	raw := obj.get(key)
	if !isPresent(raw) {
		if required {
			d.fail(l.field(key), reasonRequired)
		}
		return nil
	}
	return raw
}

// present reports whether obj has key with a value other than null.
func present(obj object, key string) bool {
	return isPresent(obj.get(key))
}

// isPresent reports whether raw holds a value other than null.
func isPresent(raw []byte) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// schemaVersion checks the optional schema_version member: absent, null
// and 0 mean version 1.
func (d *decoder) schemaVersion(obj object) {
	v := d.int(obj, top, "schema_version", false)
	if d.err == nil && checkSchemaVersion(v) != "" {
		d.fail("schema_version", reasonUnsupported)
	}
}

// string reads a string that must be valid UTF-8. encoding/json would
// silently replace invalid bytes with U+FFFD, so they are checked first.
func (d *decoder) string(obj object, l loc, key string, required bool) string {
	raw := d.get(obj, l, key, required)
	if raw == nil {
		return ""
	}
	if raw[0] != '"' {
		d.fail(l.field(key), reasonString)
		return ""
	}
	if !d.validUTF8 && !utf8.Valid(raw) {
		d.fail(l.field(key), reasonUTF8)
		return ""
	}
	if s, ok := unquote(raw); ok {
		return s
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.fail(l.field(key), reasonString)
		return ""
	}
	return s
}

// int reads an integer. Like JSON Schema, it accepts any number without a
// fractional part, such as 10.0 or 1e1. Values beyond the range of int
// saturate, so range checks still reject them.
func (d *decoder) int(obj object, l loc, key string, required bool) int {
	raw := d.get(obj, l, key, required)
	if raw == nil {
		return 0
	}
	n, ok := parseInteger(raw)
	if !ok {
		d.fail(l.field(key), reasonInteger)
		return 0
	}
	return saturateInt(n)
}

// float reads a number that fits in a float64.
func (d *decoder) float(obj object, l loc, key string, required bool) float64 {
	raw := d.get(obj, l, key, required)
	if raw == nil {
		return 0
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		d.fail(l.field(key), reasonNumber)
		return 0
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		d.fail(l.field(key), reasonFinite)
		return 0
	}
	return f
}

// bool reads an optional boolean; absent and null read as false.
func (d *decoder) bool(obj object, l loc, key string) bool {
	switch raw := d.get(obj, l, key, false); string(raw) {
	case "", "false":
		return false
	case "true":
		return true
	}
	d.fail(l.field(key), reasonBoolean)
	return false
}

// array reads an array, leaving its elements raw.
func (d *decoder) array(obj object, l loc, key string, required bool) [][]byte {
	raw := d.get(obj, l, key, required)
	if raw == nil {
		return nil
	}
	items, ok := scanArray(raw)
	if !ok {
		d.fail(l.field(key), reasonArray)
		return nil
	}
	return items
}

// object reads the object held by raw, which l locates. A nil or null
// raw reads as an empty object unless required.
func (d *decoder) object(raw []byte, l loc, required bool) object {
	if d.err != nil {
		return nil
	}
	if !isPresent(raw) {
		if required {
			d.fail(l.name(), reasonObject)
		}
		return nil
	}
	obj, ok := scanObject(raw)
	if !ok {
		d.fail(l.name(), reasonObject)
		return nil
	}
	return obj
}

// parseInteger parses a JSON number and reports whether its value is an
// integer. Magnitudes beyond 18 digits saturate to ±math.MaxInt64.
func parseInteger(raw []byte) (int64, bool) {
	if len(raw) <= 18 && !bytes.ContainsAny(raw, ".eE") {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return n, err == nil
	}
	s := raw
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	intPart, s := leadingDigits(s)
	if len(intPart) == 0 {
		return 0, false
	}
	var frac []byte
	if len(s) > 0 && s[0] == '.' {
		if frac, s = leadingDigits(s[1:]); len(frac) == 0 {
			return 0, false
		}
	}
	var exp int64
	if len(s) > 0 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		expNeg := len(s) > 0 && s[0] == '-'
		if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
			s = s[1:]
		}
		var digits []byte
		if digits, s = leadingDigits(s); len(digits) == 0 {
			return 0, false
		}
		for _, c := range digits {
			if exp < 1<<40 { // saturate: far beyond any payload size
				exp = exp*10 + int64(c-'0')
			}
		}
		if expNeg {
			exp = -exp
		}
	}
	if len(s) != 0 {
		return 0, false
	}
	// The value is mantissa × 10^exp, where mantissa is intPart and frac
	// run together and exp is corrected for the length of frac.
	mantissa := bytes.TrimLeft(append(append([]byte(nil), intPart...), frac...), "0")
	if len(mantissa) == 0 {
		return 0, true
	}
	exp -= int64(len(frac))
	trimmed := bytes.TrimRight(mantissa, "0")
	exp += int64(len(mantissa) - len(trimmed))
	if exp < 0 {
		return 0, false
	}
	if int64(len(trimmed))+exp > 18 {
		if neg {
			return -math.MaxInt64, true
		}
		return math.MaxInt64, true
	}
	n, _ := strconv.ParseInt(string(trimmed), 10, 64)
	for ; exp > 0; exp-- {
		n *= 10
	}
	if neg {
		n = -n
	}
	return n, true
}

func leadingDigits(s []byte) (digits, rest []byte) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

func saturateInt(n int64) int {
	switch {
	case n > math.MaxInt:
		return math.MaxInt
	case n < math.MinInt:
		return math.MinInt
	}
	return int(n)
}

// stringMap reads an optional object whose members are all strings.
func (d *decoder) stringMap(obj object, l loc, key string) map[string]string {
	raw := d.get(obj, l, key, false)
	if raw == nil {
		return nil
	}
	ml := loc{parent: l.field(key), index: -1}
	m := d.object(raw, ml, false)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, mem := range m {
		name := string(mem.name)
		if v := d.string(m, ml, name, true); d.err == nil {
			out[name] = v
		}
	}
	if d.err != nil {
		return nil
	}
	return out
}
