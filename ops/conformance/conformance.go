// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kretrieve/kretrieve/ops/spans"
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

// Check returns the violations in the spans in (one or more traces). Spans
// without messaging.system are not messaging spans and are only used to
// resolve parents.
func Check(in []spans.Span, opts Options) []Violation {
	c := checker{all: in, opts: opts, byID: make(map[string]spans.Span, len(in))}
	for _, s := range in {
		c.byID[s.SpanID] = s
	}
	for _, s := range in {
		c.span(s)
	}
	sort.SliceStable(c.out, func(i, j int) bool { return c.out[i].TraceID < c.out[j].TraceID })
	return c.out
}

// checker collects the violations of Check.
type checker struct {
	all  []spans.Span
	byID map[string]spans.Span
	opts Options
	out  []Violation
}

func (c *checker) add(s spans.Span, rule, format string, args ...any) {
	c.out = append(c.out, violation(s, rule, format, args...))
}

// span checks one span, if it is a messaging span.
func (c *checker) span(s spans.Span) {
	system, ok := str(s, "messaging.system")
	if !ok {
		return
	}
	opType, _ := str(s, "messaging.operation.type")
	opName, _ := str(s, "messaging.operation.name")
	dest, _ := str(s, "messaging.destination.name")
	if strings.HasPrefix(s.Name, otelnames.OpWait+" ") {
		// kretrieve's queue-wait span: not a messaging operation.
		if opType != "" {
			c.add(s, "wait-not-an-operation", "queue-wait span has messaging.operation.type %q", opType)
		}
		return
	}
	kinds, known := opKinds[opType]
	switch {
	case opType == "":
		c.add(s, "operation-type", "messaging.operation.type missing")
	case !known:
		c.add(s, "operation-type", "messaging.operation.type %q is not one of create, send, receive, process, settle", opType)
	case !contains(kinds, s.Kind):
		c.add(s, "span-kind", "%s span has kind %s, want %s", opType, s.Kind, strings.Join(kinds, " or "))
	}
	if opName == "" {
		c.add(s, "operation-name", "messaging.operation.name missing")
	}
	if dest == "" {
		c.add(s, "destination", "messaging.destination.name missing")
	} else if want := opName + " " + dest; opName != "" && s.Name != want {
		c.add(s, "span-name", "name %q, want %q ({operation} {destination})", s.Name, want)
	}
	if system == "kafka" {
		c.kafka(s, opType)
	}
	if opType == "process" {
		c.process(s, dest)
	}
}

// kafka checks a Kafka span's attributes.
func (c *checker) kafka(s spans.Span, opType string) {
	if _, ok := str(s, "messaging.destination.partition.id"); !ok && (opType == "process" || opType == "receive") {
		c.add(s, "kafka-partition", "messaging.destination.partition.id missing or not a string")
	}
	if v, _ := s.Attr("messaging.kafka.offset"); !isInt64(v) && (opType == "process" || opType == "receive") {
		c.add(s, "kafka-offset", "messaging.kafka.offset missing or not an int")
	}
	if v, ok := s.Attr(string(otelnames.KafkaClusterID)); ok {
		if id, isString := v.(string); !isString || id == "" {
			c.add(s, "kafka-cluster-id", "%s = %v is not a cluster id (a non-empty string)", otelnames.KafkaClusterID, v)
		}
	}
	if c.opts.ForbidRawKey {
		if _, ok := s.Attr("messaging.kafka.message.key"); ok {
			c.add(s, "raw-key", "messaging.kafka.message.key records the raw record key")
		}
	}
}

// process checks a process span's parent, link and queue-wait span: the
// producer's context is the parent and a link (semconv: consumer spans link
// the message's creation context).
func (c *checker) process(s spans.Span, dest string) {
	parent, hasParent := c.byID[s.ParentSpanID]
	if s.ParentSpanID != "" && hasParent && parent.Kind != "producer" {
		c.add(s, "process-parent", "parent %q is %s, want the producer span", parent.Name, parent.Kind)
	}
	if s.ParentSpanID != "" && !linksTo(s, s.ParentSpanID) {
		c.add(s, "process-link", "no link to the producer context %s", s.ParentSpanID)
	}
	if !c.opts.RequireQueueWait || s.ParentSpanID == "" {
		return
	}
	found := false
	for _, w := range c.all {
		if w.TraceID == s.TraceID && w.ParentSpanID == s.ParentSpanID && w.Name == otelnames.WaitSpan(dest) {
			found = true
			if w.EndTimeUnixNano < w.StartTimeUnixNano {
				c.add(w, "queue-wait", "negative duration")
			}
			if w.EndTimeUnixNano > s.StartTimeUnixNano {
				c.add(w, "queue-wait", "ends %d µs after its process span starts", (w.EndTimeUnixNano-s.StartTimeUnixNano)/1000)
			}
		}
	}
	if !found {
		c.add(s, "queue-wait", "no %q span beside it", otelnames.WaitSpan(dest))
	}
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
func str(s spans.Span, key string) (string, bool) {
	v, _ := s.Attr(key)
	x, ok := v.(string)
	return x, ok
}

func isInt64(v any) bool {
	_, ok := v.(int64)
	return ok
}

// linksTo reports whether s links to the span spanID.
func linksTo(s spans.Span, spanID string) bool {
	for _, l := range s.Links {
		if l.SpanID == spanID {
			return true
		}
	}
	return false
}
