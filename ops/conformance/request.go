package conformance

import (
	"fmt"

	"github.com/kretrieve/kretrieve/ops/runsummary"
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

// CheckRequest returns the violations in one request's trace: Check's with
// opts, and the shape's:
//   - every span is in the root span's trace;
//   - one root span named shape.Root, without a parent;
//   - per hop, exactly one send, wait and process span of its topic, with
//     kinds producer, internal and consumer; the send span is the child of
//     the previous hop's process span (of the root for the first hop), the
//     wait and process spans are children of the send span;
//   - the process span's consumer group is the hop's (none for "");
//   - shape.Spans spans, when set.
func CheckRequest(spans []runsummary.Span, shape Shape, opts Options) []Violation {
	out := Check(spans, opts)
	add := func(s runsummary.Span, rule, format string, args ...any) {
		out = append(out, violation(s, rule, format, args...))
	}
	byName := map[string][]runsummary.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	// trace stands in for the whole trace in violations about it.
	var trace runsummary.Span
	if len(spans) > 0 {
		trace = runsummary.Span{TraceID: spans[0].TraceID}
	}
	one := func(name string) (runsummary.Span, bool) {
		if got := byName[name]; len(got) != 1 {
			add(trace, "request-spans", "%d spans named %q, want 1", len(got), name)
			return runsummary.Span{}, false
		}
		return byName[name][0], true
	}
	root, ok := one(shape.Root)
	if !ok {
		return out
	}
	trace.TraceID = root.TraceID
	if root.ParentSpanID != "" {
		add(root, "request-root", "root span has parent %s", root.ParentSpanID)
	}
	if shape.RootKind != "" && root.Kind != shape.RootKind {
		add(root, "request-root", "kind %s, want %s", root.Kind, shape.RootKind)
	}
	if shape.RootService != "" && root.Service != shape.RootService {
		add(root, "request-root", "service %q, want %q", root.Service, shape.RootService)
	}
	for _, s := range spans {
		if s.TraceID != root.TraceID {
			add(s, "request-trace", "in trace %s, want the root's %s", s.TraceID, root.TraceID)
		}
	}
	parent := root
	for _, hop := range shape.Hops {
		send, okSend := one(otelnames.SendSpan(hop.Topic))
		wait, okWait := one(otelnames.WaitSpan(hop.Topic))
		proc, okProc := one(otelnames.ProcessSpan(hop.Topic))
		if !okSend || !okWait || !okProc {
			return out // the chain is broken: later hops have no parent to check
		}
		childOf := func(child, parent runsummary.Span) {
			if child.ParentSpanID != parent.SpanID {
				add(child, "request-parent", "parent is %s, want %q %s", child.ParentSpanID, parent.Name, parent.SpanID)
			}
		}
		childOf(send, parent)
		childOf(wait, send)
		childOf(proc, send)
		for _, k := range []struct {
			s    runsummary.Span
			kind string
		}{{send, "producer"}, {wait, "internal"}, {proc, "consumer"}} {
			if k.s.Kind != k.kind {
				add(k.s, "request-kind", "kind %s, want %s", k.s.Kind, k.kind)
			}
		}
		if g, ok := proc.Attr("messaging.consumer.group.name"); hop.Group != "" && g != hop.Group || hop.Group == "" && ok {
			add(proc, "request-group", "consumer group %v, want %q", g, hop.Group)
		}
		if hop.Service != "" {
			for _, s := range []runsummary.Span{wait, proc} {
				if s.Service != hop.Service {
					add(s, "request-service", "recorded by %q, want %q", s.Service, hop.Service)
				}
			}
		}
		parent = proc
	}
	if shape.Spans > 0 && len(spans) != shape.Spans {
		add(trace, "request-spans", "%d spans, want %d", len(spans), shape.Spans)
	}
	return out
}

func violation(s runsummary.Span, rule, format string, args ...any) Violation {
	return Violation{s.TraceID, s.SpanID, s.Name, rule, fmt.Sprintf(format, args...)}
}
