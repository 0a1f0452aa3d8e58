// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// Roles of the relay's three clients.
const (
	RoleProducer = "producer"
	RoleWorker   = "worker"
	RoleConsumer = "consumer"
)

// ProcessFunc wraps the handling of one consumed record: it calls handle
// with the context the handler should use (and produce with).
type ProcessFunc func(ctx context.Context, r *kgo.Record, highWatermark int64, handle func(context.Context))

// Stage is how one client of the relay is instrumented: the hooks of its
// kgo client and, for the worker and the consumer, the wrapping of each
// consumed record's handling.
type Stage struct {
	Hooks   []kgo.Hook
	Process ProcessFunc
}

// Instrumentation returns the Stage of each role.
type Instrumentation func(role string) Stage

// Untraced is the Instrumentation without any: no hooks, handling called
// with the poll's context.
func Untraced(string) Stage {
	return Stage{Process: func(ctx context.Context, _ *kgo.Record, _ int64, handle func(context.Context)) { handle(ctx) }}
}

// Propagator is the W3C Trace Context and Baggage propagator the traced
// instrumentations inject and extract with.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Kotel installs kotel's tracer and meter on every client and wraps
// handling in kotel's process span.
func Kotel(tp trace.TracerProvider, mp metric.MeterProvider) Instrumentation {
	return func(role string) Stage {
		topts := []kotel.TracerOpt{kotel.TracerProvider(tp), kotel.TracerPropagator(Propagator()), kotel.ClientID(role)}
		if role == RoleWorker {
			topts = append(topts, kotel.ConsumerGroup(Group))
		}
		tr := kotel.NewTracer(topts...)
		k := kotel.NewKotel(kotel.WithTracer(tr), kotel.WithMeter(kotel.NewMeter(kotel.MeterProvider(mp))))
		return Stage{
			Hooks: k.Hooks(),
			Process: func(_ context.Context, r *kgo.Record, _ int64, handle func(context.Context)) {
				ctx, span := tr.WithProcessSpan(r)
				handle(ctx)
				span.End()
			},
		}
	}
}

// Kretrieve installs kafkatrace's produce hooks on the producer and the
// worker and wraps handling in StartProcess/EndProcess; all three clients
// aggregate their messaging metrics in m, as the clients of one kretrieve
// process do. The tracer provider's sampler must be parent-based. With
// pathways, each client takes pathway checkpoints as the service
// "relay-"+role (kafkatrace.WithPathways), recorded in m. extra are more
// options of every client's Tracer.
func Kretrieve(tp trace.TracerProvider, m *kafkatrace.Metrics, pathways bool, extra ...kafkatrace.Option) Instrumentation {
	return func(role string) Stage {
		opts := []kafkatrace.Option{
			kafkatrace.WithTracerProvider(tp), kafkatrace.WithMetrics(m), kafkatrace.WithParentBasedSampling(),
			kafkatrace.WithPropagator(Propagator()), kafkatrace.WithClientID(role),
		}
		if role == RoleWorker {
			opts = append(opts, kafkatrace.WithConsumerGroup(Group))
		}
		if pathways {
			opts = append(opts, kafkatrace.WithPathways("relay-"+role))
		}
		tr := kafkatrace.New(append(opts, extra...)...)
		s := Stage{Process: func(ctx context.Context, r *kgo.Record, hw int64, handle func(context.Context)) {
			pctx, span, qw := tr.StartProcess(ctx, r, hw)
			handle(pctx)
			tr.EndProcess(pctx, r, qw.End, span, nil, "") // qw.End: when processing started
		}}
		if role != RoleConsumer {
			s.Hooks = []kgo.Hook{tr}
		}
		return s
	}
}
