// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"fmt"
	"log/slog"
)

// Secret holds a string that never shows itself: fmt (every verb, %#v
// included), slog and encoding/json print "[REDACTED]" instead of the value.
// The value sits behind a pointer, so even where fmt cannot call Secret's
// methods (a Secret inside an unexported struct field) it prints an address,
// not the value. The zero Secret is empty. Reveal returns the value.
type Secret struct{ v *string }

// NewSecret returns a Secret holding v.
func NewSecret(v string) Secret {
	if v == "" {
		return Secret{}
	}
	return Secret{&v}
}

const redacted = "[REDACTED]"

// Reveal returns the secret's value, for the one place that must send it.
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.Reveal() == "" }

// String returns "[REDACTED]".
func (Secret) String() string { return redacted }

// GoString returns "[REDACTED]".
func (Secret) GoString() string { return redacted }

// Format prints "[REDACTED]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue makes slog print "[REDACTED]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText makes encoding/json and friends print "[REDACTED]".
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
