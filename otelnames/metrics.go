// SPDX-License-Identifier: Apache-2.0

package otelnames

// Metric names, each with its unit (UCUM, as OpenTelemetry writes them).
const (
	// MetricQueueWait is the histogram of the time records spent in Kafka
	// between their timestamp and the start of processing.
	MetricQueueWait     = "kretrieve.messaging.queue_wait.duration"
	MetricQueueWaitUnit = "s"
	// MetricPathwayLatency is the histogram of pathway latencies: per
	// pathway and checkpoint, the edge latency (previous checkpoint to this
	// one) and the latency from origin (first checkpoint to this one) of
	// every record, whatever the trace sampling.
	MetricPathwayLatency     = "kretrieve.pathway.latency"
	MetricPathwayLatencyUnit = "s"
	// MetricLagRecords is the gauge of a consumer group's lag in records.
	MetricLagRecords     = "kretrieve.consumer.lag"
	MetricLagRecordsUnit = "{message}"
	// MetricLagSeconds is the gauge of a consumer group's lag in time.
	MetricLagSeconds     = "kretrieve.consumer.lag.seconds"
	MetricLagSecondsUnit = "s"
	// MetricLagStatus is the gauge of a consumer group's lag health on a
	// partition, as a code: 0 ok, 1 warn, 2 stall, 3 stop, 4 rewind
	// (lag.Status.Code). Its unit in braces adds no suffix to the
	// Prometheus name (kretrieve_consumer_lag_status).
	MetricLagStatus     = "kretrieve.consumer.lag.status"
	MetricLagStatusUnit = "{status}"
	// MetricLagVelocity is the gauge of how fast a consumer group's lag
	// changes over the health window; negative when it drains.
	MetricLagVelocity     = "kretrieve.consumer.lag.velocity"
	MetricLagVelocityUnit = "{message}/s"
	// MetricLagDrain is the gauge of the estimated time to drain a
	// consumer group's lag, while it drains (its unit is
	// MetricLagSecondsUnit).
	MetricLagDrain = "kretrieve.consumer.lag.drain"
	// MetricRetentionHeadroom is the gauge of the time before the oldest
	// record a consumer group has yet to consume is due for deletion by
	// its topic's retention.ms (its unit is MetricLagSecondsUnit).
	MetricRetentionHeadroom = "kretrieve.consumer.retention.headroom"
	// MetricIndexLagRecords is the gauge of the records of the documents
	// topic a worker's index has yet to apply (its unit is
	// MetricLagRecordsUnit).
	MetricIndexLagRecords = "kretrieve.index.lag"
	// MetricIndexLagSeconds is the gauge of the age of the oldest record
	// of the documents topic a worker's index has yet to apply (its unit
	// is MetricLagSecondsUnit).
	MetricIndexLagSeconds = "kretrieve.index.lag.seconds"
	// MetricRequestsUnfinished is the gauge of the requests of the origin
	// cohorts judged (ops/status.Completeness) that did not end, by where
	// they wait (PathwayEdge: "topic → group" or "in group").
	MetricRequestsUnfinished     = "kretrieve.requests.unfinished"
	MetricRequestsUnfinishedUnit = "{request}"
	// MetricPathwaysWindows counts the pathway windows a process tried to
	// publish to the pathways topic, with error.type on failures.
	MetricPathwaysWindows     = "kretrieve.pathways.windows"
	MetricPathwaysWindowsUnit = "{window}"
	// MetricResultsDropped counts the outcome records not handed to a
	// waiter, by [DroppedReason].
	MetricResultsDropped     = "kretrieve.results.dropped"
	MetricResultsDroppedUnit = "{record}"
	// MetricGatewayRefused counts the API requests the gateway refused
	// because its in-flight limit was reached, by http.route.
	MetricGatewayRefused     = "kretrieve.gateway.refused"
	MetricGatewayRefusedUnit = "{request}"
	// MetricRequestsExpired counts the records a worker took past the
	// caller's deadline (messages.HeaderDeadline) and did not process:
	// committed, with nothing produced. Its attributes are the
	// destination (the topic read) and the consumer group.
	MetricRequestsExpired     = "kretrieve.requests.expired"
	MetricRequestsExpiredUnit = "{record}"
	// MetricSpansDropped counts the spans the tracing setup dropped.
	MetricSpansDropped = "kretrieve.tracing.spans.dropped"
	// MetricSpansExported counts the spans the tracing setup exported.
	MetricSpansExported = "kretrieve.tracing.spans.exported"
	// MetricSpansUnit is the unit of MetricSpansDropped and
	// MetricSpansExported.
	MetricSpansUnit = "{span}"
	// MetricMetricExportsFailed counts the metric exports of the tracing
	// setup that failed.
	MetricMetricExportsFailed = "kretrieve.tracing.metric_exports.failed"
	// MetricExportsUnit is the unit of MetricMetricExportsFailed.
	MetricExportsUnit = "{export}"
	// MetricLogRecordsDropped counts the log records of failed log
	// exports.
	MetricLogRecordsDropped = "kretrieve.tracing.log_records.dropped"
	// MetricLogRecordsUnit is the unit of MetricLogRecordsDropped.
	MetricLogRecordsUnit = "{log_record}"
)
