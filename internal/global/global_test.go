// SPDX-License-Identifier: Apache-2.0

package global

import (
	"log/slog"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestNilFallsBackToTheGlobals: nil gives the global, anything else is kept.
func TestNilFallsBackToTheGlobals(t *testing.T) {
	if TracerProvider(nil) != otel.GetTracerProvider() || MeterProvider(nil) != otel.GetMeterProvider() ||
		Propagator(nil) != otel.GetTextMapPropagator() || Logger(nil) != slog.Default() {
		t.Error("nil did not give the global")
	}
	tp, mp, p := tracenoop.NewTracerProvider(), noop.NewMeterProvider(), propagation.Baggage{}
	l := slog.New(slog.DiscardHandler)
	if TracerProvider(tp) != tp || MeterProvider(mp) != mp || Propagator(p) != p || Logger(l) != l {
		t.Error("a given value was replaced")
	}
}

// allowed are the non-test files besides this package's that may read the
// OpenTelemetry globals, and why.
// None today; an entry needs a reason the package doc can live with.
var allowed = map[string]string{}

// TestOnlyHomeOfTheGlobals backs the package doc: no other non-test file
// of the module calls otel.GetTracerProvider, otel.GetMeterProvider or
// otel.GetTextMapPropagator.
func TestOnlyHomeOfTheGlobals(t *testing.T) {
	found, err := srcscan.ModuleCalls(false, "go.opentelemetry.io/otel", "GetTracerProvider", "GetMeterProvider", "GetTextMapPropagator")
	if err != nil {
		t.Fatal(err)
	}
	for file := range found {
		if file != "internal/global/global.go" && allowed[file] == "" {
			t.Errorf("%s reads the OTel globals (otel.Get...): use package internal/global", file)
		}
	}
	if found["internal/global/global.go"] == 0 {
		t.Error("the scan did not find this package's own calls")
	}
	for f := range allowed {
		if found[f] == 0 {
			t.Errorf("%s no longer reads the globals: remove it from allowed", f)
		}
	}
}

// TestFilledKeepsWhatIsSetAndFillsTheRest: a collaborator that is set is
// kept, the unset ones are the globals.
func TestFilledKeepsWhatIsSetAndFillsTheRest(t *testing.T) {
	l := slog.New(slog.DiscardHandler)
	tp := tracenoop.NewTracerProvider()
	c := Collaborators{Logger: l, TracerProvider: tp}.Filled()
	if c.Logger != l {
		t.Error("the logger set was replaced")
	}
	if c.TracerProvider != tp {
		t.Errorf("tracer provider %T, want the one set", c.TracerProvider)
	}
	if c.MeterProvider != otel.GetMeterProvider() || c.Propagator != otel.GetTextMapPropagator() {
		t.Error("unset collaborators are not the globals")
	}
}

// applyTestOption is a sealed option as the packages declare theirs.
type applyTestOption interface{ apply(*[]string) }

type applyTestFunc func(*[]string)

func (f applyTestFunc) apply(s *[]string) { f(s) }

// TestApplySkipsNilAndKeepsOrder: Apply runs the options in order and
// skips a nil one.
func TestApplySkipsNilAndKeepsOrder(t *testing.T) {
	add := func(v string) applyTestOption {
		return applyTestFunc(func(s *[]string) { *s = append(*s, v) })
	}
	var got []string
	Apply(&got, []applyTestOption{add("a"), nil, add("b")}, applyTestOption.apply)
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("applied %v, want [a b]", got)
	}
}
