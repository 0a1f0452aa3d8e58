// Package conformance checks spans against the OpenTelemetry messaging
// semantic conventions (the version kretrieve follows, semconv 1.43) and
// against kretrieve's own rules for Kafka traces. It works on kretrieve's
// backend-neutral span record, runsummary.Span, so anyone can run it against
// traces of their own services fetched from Jaeger (see FromJaeger) or any
// other backend.
package conformance

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/otelnames"
)

// Violation is one broken rule.
type Violation struct {
	TraceID, SpanID, Span string
	Rule                  string
	Detail                string
}

func (v Violation) String() string {
	return fmt.Sprintf("trace %s span %s (%s): %s: %s", v.TraceID, v.SpanID, v.Span, v.Rule, v.Detail)
}

// Options tune the checks.
type Options struct {
	// ForbidRawKey reports spans that record messaging.kafka.message.key
	// (kretrieve records a hash instead). Default in Default(): true.
	ForbidRawKey bool
	// RequireQueueWait requires a "wait <topic>" span beside every Kafka
	// process span, ending no later than the process span starts.
	RequireQueueWait bool
}

// Default returns kretrieve's own options: every rule on.
func Default() Options { return Options{ForbidRawKey: true, RequireQueueWait: true} }

var opKinds = map[string][]string{
	"create":  {"producer"},
	"send":    {"producer", "client"},
	"receive": {"consumer", "client"},
	"process": {"consumer"},
	"settle":  {"client"},
}

// Check returns the violations in spans (one or more traces). Spans without
// messaging.system are not messaging spans and are only used to resolve
// parents.
func Check(spans []runsummary.Span, opts Options) []Violation {
	byID := make(map[string]runsummary.Span, len(spans))
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	var out []Violation
	add := func(s runsummary.Span, rule, format string, args ...any) {
		out = append(out, Violation{s.TraceID, s.SpanID, s.Name, rule, fmt.Sprintf(format, args...)})
	}
	for _, s := range spans {
		system, ok := str(s, "messaging.system")
		if !ok {
			continue
		}
		opType, _ := str(s, "messaging.operation.type")
		opName, _ := str(s, "messaging.operation.name")
		dest, _ := str(s, "messaging.destination.name")
		isWait := strings.HasPrefix(s.Name, otelnames.OpWait+" ")
		if isWait {
			// kretrieve's queue-wait span: not a messaging operation.
			if opType != "" {
				add(s, "wait-not-an-operation", "queue-wait span has messaging.operation.type %q", opType)
			}
			continue
		}
		kinds, known := opKinds[opType]
		switch {
		case opType == "":
			add(s, "operation-type", "messaging.operation.type missing")
		case !known:
			add(s, "operation-type", "messaging.operation.type %q is not one of create, send, receive, process, settle", opType)
		case !contains(kinds, s.Kind):
			add(s, "span-kind", "%s span has kind %s, want %s", opType, s.Kind, strings.Join(kinds, " or "))
		}
		if opName == "" {
			add(s, "operation-name", "messaging.operation.name missing")
		}
		if dest == "" {
			add(s, "destination", "messaging.destination.name missing")
		} else if want := opName + " " + dest; opName != "" && s.Name != want {
			add(s, "span-name", "name %q, want %q ({operation} {destination})", s.Name, want)
		}
		if system == "kafka" {
			if _, ok := str(s, "messaging.destination.partition.id"); !ok && (opType == "process" || opType == "receive") {
				add(s, "kafka-partition", "messaging.destination.partition.id missing or not a string")
			}
			if v, _ := s.Attr("messaging.kafka.offset"); !isInt64(v) && (opType == "process" || opType == "receive") {
				add(s, "kafka-offset", "messaging.kafka.offset missing or not an int")
			}
			if opts.ForbidRawKey {
				if _, ok := s.Attr("messaging.kafka.message.key"); ok {
					add(s, "raw-key", "messaging.kafka.message.key records the raw record key")
				}
			}
		}
		if opType == "process" {
			// The producer's context is the parent and a link (semconv:
			// consumer spans link the message's creation context).
			parent, hasParent := byID[s.ParentSpanID]
			if s.ParentSpanID != "" && hasParent && parent.Kind != "producer" {
				add(s, "process-parent", "parent %q is %s, want the producer span", parent.Name, parent.Kind)
			}
			if s.ParentSpanID != "" && !linksTo(s, s.ParentSpanID) {
				add(s, "process-link", "no link to the producer context %s", s.ParentSpanID)
			}
			if opts.RequireQueueWait && s.ParentSpanID != "" {
				found := false
				for _, w := range spans {
					if w.TraceID == s.TraceID && w.ParentSpanID == s.ParentSpanID && w.Name == otelnames.WaitSpan(dest) {
						found = true
						if w.EndTimeUnixNano < w.StartTimeUnixNano {
							add(w, "queue-wait", "negative duration")
						}
						if w.EndTimeUnixNano > s.StartTimeUnixNano {
							add(w, "queue-wait", "ends %d µs after its process span starts", (w.EndTimeUnixNano-s.StartTimeUnixNano)/1000)
						}
					}
				}
				if !found {
					add(s, "queue-wait", "no %q span beside it", otelnames.WaitSpan(dest))
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TraceID < out[j].TraceID })
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// str returns the span's attribute key if it is a string.
func str(s runsummary.Span, key string) (string, bool) {
	v, _ := s.Attr(key)
	x, ok := v.(string)
	return x, ok
}

func isInt64(v any) bool {
	_, ok := v.(int64)
	return ok
}

// linksTo reports whether s links to the span spanID.
func linksTo(s runsummary.Span, spanID string) bool {
	for _, l := range s.Links {
		if l.SpanID == spanID {
			return true
		}
	}
	return false
}
