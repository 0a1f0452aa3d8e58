// SPDX-License-Identifier: Apache-2.0

package spans_test

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/spans"
)

func TestNewAttributeAndAttr(t *testing.T) {
	s := spans.Span{Attributes: []spans.Attribute{
		spans.NewAttribute("s", "x"),
		spans.NewAttribute("i", int64(7)),
		spans.NewAttribute("f", 1.5),
		spans.NewAttribute("b", true),
		spans.NewAttribute("ss", []string{"a", "b"}),
		spans.NewAttribute("other", 3), // an int: kept as text
	}}
	for _, tc := range []struct {
		key, typ string
		want     any
	}{
		{"s", "string", "x"}, {"i", "int64", int64(7)}, {"f", "float64", 1.5}, {"b", "bool", true},
		{"ss", "string[]", []string{"a", "b"}}, {"other", "string", "3"},
	} {
		got, ok := s.Attr(tc.key)
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Attr(%q) = %#v, %v; want %#v", tc.key, got, ok, tc.want)
		}
		for _, a := range s.Attributes {
			if a.Key == tc.key && a.Type != tc.typ {
				t.Errorf("%s: type %s, want %s", tc.key, a.Type, tc.typ)
			}
		}
	}
	if v, ok := s.Attr("missing"); ok || v != nil {
		t.Errorf("Attr(missing) = %v, %v", v, ok)
	}
}

// TestImportsOfKretrieveOnlyTelemetry backs the package doc: of kretrieve,
// spans imports only otelnames' span names and internal/termsafe's
// escaping.
func TestImportsOfKretrieveOnlyTelemetry(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, "github.com/kretrieve/kretrieve/") && imp != "github.com/kretrieve/kretrieve/otelnames" &&
			imp != "github.com/kretrieve/kretrieve/internal/termsafe" {
			t.Errorf("spans imports %s", imp)
		}
	}
}
