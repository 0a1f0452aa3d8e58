// Package bench holds end-to-end benchmarks of kretrieve's Kafka tracing
// against an in-process broker (kfake through internal/kafkatest). It has no
// non-test code; it imports kafkatrace and internal/kafkatest and nothing
// else of kretrieve, and nothing imports it.
//
// # The relay benchmark
//
// BenchmarkRelay moves b.N records of 300 bytes through a relay:
//
//	producer → topic A (6 partitions) → worker (group consumer: for each
//	record start processing, produce one record to topic B, end processing)
//	→ topic B (6 partitions) → consumer (reads B, counts)
//
// with one sub-benchmark per variant, all in the same run:
//
//	untraced               plain kgo clients, no hooks
//	kotel                  franz-go's kotel tracer and meter hooks on every
//	                       client, kotel's WithProcessSpan per record in the
//	                       worker and the consumer; AlwaysSample
//	kretrieve-100          kafkatrace.Tracer hooks on producer and worker,
//	                       StartProcess/EndProcess in worker and consumer;
//	                       ParentBased(AlwaysSample)
//	kretrieve-1            the same with ParentBased(TraceIDRatioBased(0.01))
//	kretrieve-100-defaults kretrieve-100 with the SDK's default batch span
//	                       processor options (queue of 2048 spans)
//
// Traced variants export over OTLP/HTTP (otlptracehttp) through a batch span
// processor to an httptest server that reads and discards each request; the
// non-default variants use a queue of 1<<20 spans so that nothing is dropped.
// Metrics go to an SDK meter provider with a manual reader (recorded, never
// exported) for both kotel and kretrieve.
//
// Each sub-benchmark run starts its own broker, topics, clients and
// providers outside the timer; the timed part runs from the first produce
// until the consumer has counted b.N records and the tracer provider has
// been flushed, and is bounded by a 2 minute timeout. Intended invocation:
//
//	go test -run '^$' -bench Relay -benchtime 20000x -count 3 ./bench/
//
// Reported metrics, per variant:
//
//	ns/op          wall time per relayed record
//	msgs/s         records relayed per second
//	cpu-µs/msg     user+system CPU of the whole process (clients, the
//	               in-process broker, the SDK and the sink) per record,
//	               from getrusage(RUSAGE_SELF)
//	spans/msg      spans ended per record (traced variants)
//	dropped-spans  spans ended but never received by the exporter, counted
//	               after the provider's shutdown (traced variants)
//
// Ratios between variants come from the same output: divide the msgs/s or
// cpu-µs/msg of two sub-benchmarks (for example kretrieve-100 over kotel,
// and kretrieve-1 over untraced), taking the median of the -count runs;
// benchstat (golang.org/x/perf/cmd/benchstat) prints those medians per
// sub-benchmark from the saved output.
package bench
