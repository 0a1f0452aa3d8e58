// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"errors"
	"fmt"
	"testing"
)

func TestRedactError(t *testing.T) {
	sentinel := errors.New("backend down")
	const query = `Find "Quoted" café`
	tests := []struct {
		name     string
		err      error
		withheld bool
	}{
		{"no user data", fmt.Errorf("search: %w", sentinel), false},
		{"verbatim", fmt.Errorf("cannot parse %s: %w", query, sentinel), true},
		{"other case", fmt.Errorf("term find \"quoted\" café: %w", sentinel), true},
		{"go-quoted", fmt.Errorf("parse %q: %w", query, sentinel), true},
		{"json-quoted", fmt.Errorf(`{"query":"Find \"Quoted\" café"}: %w`, sentinel), true},
		{"ascii-escaped", fmt.Errorf("parse %+q: %w", query, sentinel), false}, // not a form RedactError knows
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactError(tt.err, query, "", "  ")
			if !errors.Is(got, sentinel) {
				t.Errorf("%v no longer matches the wrapped error", got)
			}
			if withheld := got.Error() != tt.err.Error(); withheld != tt.withheld {
				t.Errorf("RedactError(%q) = %q, withheld %v, want %v", tt.err, got, withheld, tt.withheld)
			}
		})
	}
	if RedactError(nil, query) != nil {
		t.Error("RedactError(nil) is not nil")
	}
	if err := RedactError(Permanent(fmt.Errorf("bad %s", query)), query); !IsPermanent(err) || err.Error() != "error text withheld: it contains user data" {
		t.Errorf("permanent error redacted to %v (permanent %v)", err, IsPermanent(err))
	}
}
