// SPDX-License-Identifier: Apache-2.0

package status

import (
	"encoding/json"
)

// Unknown is how a renderer prints a number that is not known.
const Unknown = "-"

// Number is what a Maybe can hold.
type Number interface{ ~int64 | ~float64 }

// Maybe is a measurement that may be unknown: the zero Maybe is unknown.
// It encodes in JSON as its value, or null when unknown.
type Maybe[T Number] struct {
	// V is the value; meaningless when Known is false.
	V T
	// Known says the value was measured.
	Known bool
}

// Of returns the known measurement v.
func Of[T Number](v T) Maybe[T] { return Maybe[T]{V: v, Known: true} }

// Format returns f of the value, or Unknown.
func (m Maybe[T]) Format(f func(T) string) string {
	if !m.Known {
		return Unknown
	}
	return f(m.V)
}

// MarshalJSON encodes the value, or null when unknown.
func (m Maybe[T]) MarshalJSON() ([]byte, error) {
	if !m.Known {
		return []byte("null"), nil
	}
	return json.Marshal(m.V)
}

// UnmarshalJSON decodes a value, or null as unknown.
func (m *Maybe[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*m = Maybe[T]{}
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Of(v)
	return nil
}
