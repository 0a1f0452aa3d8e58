// SPDX-License-Identifier: Apache-2.0

package search

import (
	"reflect"
	"testing"
)

func TestIdentName(t *testing.T) {
	tests := []struct {
		id, want string
	}{
		{"net/url", "net url"},
		{"net/url.ParseQuery", "net url ParseQuery Parse Query"},
		{"net/url.URL", "net url"},
		{"bufio.Scanner.Scan", "bufio Scanner Scan"},
		{"net/http.HTTPServer", "net http HTTPServer Server"},
		{"crypto/sha256.Sum256", "crypto sha256 sha 256 Sum256 Sum"},
		{"os.O_RDONLY", "os O RDONLY"},
		{"notes/kafka-consumer-groups", "notes kafka consumer groups"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := identName(tt.id); got != tt.want {
				t.Errorf("identName(%q) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestSplitCamel(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ParseQuery", []string{"Parse", "Query"}},
		{"HTTPServer", []string{"HTTP", "Server"}},
		{"ServeHTTP", []string{"Serve", "HTTP"}},
		{"Int64", []string{"Int", "64"}},
		{"lower", []string{"lower"}},
		{"URL", []string{"URL"}},
		{"Écrire", []string{"Écrire"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := splitCamel(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splitCamel(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
