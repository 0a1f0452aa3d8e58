// SPDX-License-Identifier: Apache-2.0

package messages

import (
	"bytes"
	"encoding/json"
)

// The functions in this file walk JSON that validJSON (json.Valid's
// grammar) has accepted, so they need not detect syntax errors. They split
// objects and arrays into raw member values without decoding them, in one
// pass and without the case-insensitive name matching of encoding/json's
// struct decoding.

// member is one member of a JSON object: its unescaped name and its raw
// value.
type member struct {
	name, value []byte
}

// object holds the members of a JSON object in order. Member names match
// case-sensitively, as in JSON Schema, and a repeated name keeps its last
// value, as in encoding/json. A nil object stands for an absent one.
type object []member

// get returns the raw value of the member called name, or nil.
func (o object) get(name string) []byte {
	for i := len(o) - 1; i >= 0; i-- {
		if string(o[i].name) == name {
			return o[i].value
		}
	}
	return nil
}

// scanObject splits the valid JSON value v into its members. It reports
// false when v is not an object.
func scanObject(v []byte) (object, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	obj := make(object, 0, 8)
	i := skipSpace(v, 1)
	if v[i] == '}' {
		return obj, true
	}
	for {
		n := skipString(v[i:])
		name := v[i+1 : i+n-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			name = unescape(v[i : i+n])
		}
		i = skipSpace(v, i+n) // at ':'
		i = skipSpace(v, i+1) // at the value
		n = skipValue(v[i:])
		obj = append(obj, member{name: name, value: v[i : i+n]})
		i = skipSpace(v, i+n) // at ',' or '}'
		if v[i] == '}' {
			return obj, true
		}
		i = skipSpace(v, i+1)
	}
}

// scanArray splits the valid JSON value v into its elements. It reports
// false when v is not an array.
func scanArray(v []byte) ([][]byte, bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	var items [][]byte
	i := skipSpace(v, 1)
	if v[i] == ']' {
		return items, true
	}
	for {
		n := skipValue(v[i:])
		items = append(items, v[i:i+n])
		i = skipSpace(v, i+n) // at ',' or ']'
		if v[i] == ']' {
			return items, true
		}
		i = skipSpace(v, i+1)
	}
}

// skipValue returns the length of the valid JSON value at the start of v.
func skipValue(v []byte) int {
	switch v[0] {
	case '"':
		return skipString(v)
	case '{', '[':
		depth := 0
		for i := 0; i < len(v); i++ {
			switch v[i] {
			case '"':
				i += skipString(v[i:]) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(v)
	default: // number, true, false or null
		i := 0
		for i < len(v) && !isDelimiter(v[i]) {
			i++
		}
		return i
	}
}

// skipString returns the length of the valid JSON string at the start of v,
// quotes included.
func skipString(v []byte) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(v)
}

func skipSpace(v []byte, i int) int {
	for i < len(v) && isSpace(v[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelimiter(c byte) bool { return c == ',' || c == '}' || c == ']' || isSpace(c) }

// unescape decodes the valid JSON string s, quotes included.
func unescape(s []byte) []byte {
	var str string
	_ = json.Unmarshal(s, &str) // cannot fail: s is a valid JSON string
	return []byte(str)
}
