// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"fmt"

	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/topology"
)

// Hop is one Kafka hop of a request's trace: the record sent to Topic and
// processed by consumer group Group ("" for a direct consumer, such as the
// result collector). Service, when set, is the service.name that must
// record the hop's wait and process spans.
type Hop struct{ Topic, Group, Service string }

// Hops returns the hops of a request through t, in order: each stage's
// input, consumed by the stage's group, then the results topic, consumed
// without a group. service, when not nil, names the service of a stage's
// spans; results is the service of the results consumer ("" for any).
func Hops(t topology.Topology, service func(stage string) string, results string) []Hop {
	hops := make([]Hop, 0, len(t.Stages)+1)
	for _, s := range t.Stages {
		h := Hop{Topic: s.Input, Group: s.Group}
		if service != nil {
			h.Service = service(s.Name)
		}
		hops = append(hops, h)
	}
	return append(hops, Hop{Topic: t.Results(), Service: results})
}

// Shape is the structure of one request's trace.
type Shape struct {
	// Root is the name of the root span (the one without a parent);
	// RootKind and RootService, when set, are its kind and service.name.
	Root, RootKind, RootService string
	// Hops are the request's Kafka hops, in order.
	Hops []Hop
	// Spans, when > 0, is the number of spans in the trace.
	Spans int
}

// CheckRequest returns the violations in in, one request's trace: Check's
// with opts, and the shape's:
//   - every span is in the root span's trace;
//   - one root span named shape.Root, without a parent;
//   - per hop, exactly one send, wait and process span of its topic, with
//     kinds producer, internal and consumer; the send span is the child of
//     the previous hop's process span (of the root for the first hop), the
//     wait and process spans are children of the send span;
//   - the process span's consumer group is the hop's (none for "");
//   - shape.Spans spans, when set.
func CheckRequest(in []spans.Span, shape Shape, opts Options) []Violation {
	r := request{checker: checker{out: Check(in, opts)}, byName: map[string][]spans.Span{}}
	for _, s := range in {
		r.byName[s.Name] = append(r.byName[s.Name], s)
	}
	if len(in) > 0 {
		r.trace = spans.Span{TraceID: in[0].TraceID}
	}
	root, ok := r.one(shape.Root)
	if !ok {
		return r.out
	}
	r.trace.TraceID = root.TraceID
	if root.ParentSpanID != "" {
		r.add(root, "request-root", "root span has parent %s", root.ParentSpanID)
	}
	if shape.RootKind != "" && root.Kind != shape.RootKind {
		r.add(root, "request-root", "kind %s, want %s", root.Kind, shape.RootKind)
	}
	if shape.RootService != "" && root.Service != shape.RootService {
		r.add(root, "request-root", "service %q, want %q", root.Service, shape.RootService)
	}
	for _, s := range in {
		if s.TraceID != root.TraceID {
			r.add(s, "request-trace", "in trace %s, want the root's %s", s.TraceID, root.TraceID)
		}
	}
	parent := root
	for _, hop := range shape.Hops {
		if parent, ok = r.hop(hop, parent); !ok {
			return r.out // the chain is broken: later hops have no parent to check
		}
	}
	if shape.Spans > 0 && len(in) != shape.Spans {
		r.add(r.trace, "request-spans", "%d spans, want %d", len(in), shape.Spans)
	}
	return r.out
}

// request collects the violations of CheckRequest.
type request struct {
	checker
	byName map[string][]spans.Span
	// trace stands in for the whole trace in violations about it.
	trace spans.Span
}

// one returns the one span named name, reporting any other count.
func (r *request) one(name string) (spans.Span, bool) {
	if got := r.byName[name]; len(got) != 1 {
		r.add(r.trace, "request-spans", "%d spans named %q, want 1", len(got), name)
		return spans.Span{}, false
	}
	return r.byName[name][0], true
}

// hop checks the send, wait and process spans of hop, the send span a child
// of parent, and returns the process span: the next hop's parent. It is
// false when the hop does not have exactly one of each.
func (r *request) hop(hop Hop, parent spans.Span) (spans.Span, bool) {
	send, okSend := r.one(otelnames.SendSpan(hop.Topic))
	wait, okWait := r.one(otelnames.WaitSpan(hop.Topic))
	proc, okProc := r.one(otelnames.ProcessSpan(hop.Topic))
	if !okSend || !okWait || !okProc {
		return spans.Span{}, false
	}
	childOf := func(child, parent spans.Span) {
		if child.ParentSpanID != parent.SpanID {
			r.add(child, "request-parent", "parent is %s, want %q %s", child.ParentSpanID, parent.Name, parent.SpanID)
		}
	}
	childOf(send, parent)
	childOf(wait, send)
	childOf(proc, send)
	for _, k := range []struct {
		s    spans.Span
		kind string
	}{{send, "producer"}, {wait, "internal"}, {proc, "consumer"}} {
		if k.s.Kind != k.kind {
			r.add(k.s, "request-kind", "kind %s, want %s", k.s.Kind, k.kind)
		}
	}
	if g, ok := proc.Attr("messaging.consumer.group.name"); hop.Group != "" && g != hop.Group || hop.Group == "" && ok {
		r.add(proc, "request-group", "consumer group %v, want %q", g, hop.Group)
	}
	if hop.Service != "" {
		for _, s := range []spans.Span{wait, proc} {
			if s.Service != hop.Service {
				r.add(s, "request-service", "recorded by %q, want %q", s.Service, hop.Service)
			}
		}
	}
	return proc, true
}

func violation(s spans.Span, rule, format string, args ...any) Violation {
	return Violation{s.TraceID, s.SpanID, s.Name, rule, fmt.Sprintf(format, args...)}
}
