// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/kretrieve/kretrieve/otelnames"
)

// ScopeName is the instrumentation scope of the gauges.
const ScopeName = "github.com/kretrieve/kretrieve/lag"

// DefaultInterval is the time between two measurements of a Monitor.
const DefaultInterval = 15 * time.Second

// Monitor measures the lag of consumer groups (NewMonitor), or of a Reader
// (NewReaderMonitor), periodically and exports the last measurement as two
// observable gauges. A consumer groups' Monitor's are, by messaging.system,
// messaging.consumer.group.name, messaging.destination.name and
// messaging.destination.partition.id:
//
//   - kretrieve.consumer.lag ({message}): PartitionLag.Records;
//   - kretrieve.consumer.lag.seconds (s): PartitionLag.Seconds;
//   - kretrieve.consumer.lag.status ({status}): the code of Health.Status
//     (Status.Code: 0 ok, 1 warn, 2 stall, 3 stop, 4 rewind; none when
//     unknown);
//   - kretrieve.consumer.lag.velocity ({message}/s): Health.Velocity;
//   - kretrieve.consumer.lag.drain (s): Health.Drain, only when draining;
//   - kretrieve.consumer.retention.headroom (s): Health.Headroom, only
//     when known.
//
// Each measurement is added to a Tracker judging the lag's health over
// MonitorConfig.Window; the topics' retention.ms is described at most
// every MonitorConfig.RetentionRefresh (Retentions).
//
// The gauges' callback only reads the last measurement; it never talks to
// Kafka. A value that could not be measured is not reported, and after a
// measurement that failed as a whole nothing is reported until the next one
// succeeds, so a stale lag is never exported. A Monitor is safe for
// concurrent use.
type Monitor struct {
	measure  func(context.Context) ([]PartitionLag, error)
	attrsOf  func(PartitionLag) attribute.Set
	what     string // what is measured, for the logs: "consumer lag"
	interval time.Duration
	logger   *slog.Logger
	reg      metric.Registration
	records  metric.Int64ObservableGauge
	seconds  metric.Float64ObservableGauge
	// health are the health gauges; nil for a Reader's Monitor.
	health     *healthGauges
	tracker    *Tracker
	retentions *Retentions
	// retentionLogged says a failed retention lookup was logged at warn.
	retentionLogged bool

	// uncommitted holds the groups logged as having no commits yet: a
	// group a fresh worker has not committed in is logged once, at info.
	// Only Run's goroutine uses it.
	uncommitted map[string]bool

	mu     sync.Mutex
	last   []PartitionLag
	lastAt time.Time // when last was measured (its start)
	// lastStarted is when the measurement last stored (or failed) started.
	lastStarted time.Time
	obs         []observation
	attrs       map[attrKey]metric.ObserveOption // cached attribute sets
	// ends holds each partition's end offset at the measurement that
	// started at lastStarted: bounds the age of later records (bound).
	ends map[attrKey]int64
	// skewLogged says a clock skew was logged at warn already.
	skewLogged bool
}

type attrKey struct {
	group, topic string
	partition    int32
}

type observation struct {
	records int64
	seconds float64
	health  Health
	attrs   metric.ObserveOption
}

// MonitorConfig configures a Monitor.
type MonitorConfig struct {
	// Groups are the consumer groups measured. Default: none, which
	// measures every group of the cluster.
	Groups []string
	// Interval is the time between two measurements. Default:
	// DefaultInterval.
	Interval time.Duration
	// Window is the span of measurements the lag's health is judged
	// over (Tracker). Default: 10 Intervals.
	Window time.Duration
	// RetentionRefresh is how long a topic's retention.ms is cached.
	// Default: DefaultRetentionRefresh.
	RetentionRefresh time.Duration
}

// Validate reports configuration errors.
func (c MonitorConfig) Validate() error {
	var errs []error
	if c.Interval < 0 {
		errs = append(errs, errors.New("lag monitor: interval must not be negative"))
	}
	if c.Window < 0 {
		errs = append(errs, errors.New("lag monitor: window must not be negative"))
	}
	if c.RetentionRefresh < 0 {
		errs = append(errs, errors.New("lag monitor: retention refresh must not be negative"))
	}
	return errors.Join(errs...)
}

// newConfig returns cfg with its defaults.
func newConfig(cfg MonitorConfig) MonitorConfig {
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Window == 0 {
		cfg.Window = 10 * cfg.Interval
	}
	return cfg
}

// NewMonitor returns a Monitor of cfg.Groups measuring with
// Measure(ctx, baseOpts, cfg.Groups...) every cfg.Interval once Run is
// called, and registers its gauges on the meter provider of opts.
func NewMonitor(baseOpts []kgo.Opt, cfg MonitorConfig, opts ...Option) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg, baseOpts, groups := newConfig(cfg), slices.Clone(baseOpts), slices.Clone(cfg.Groups)
	m := &Monitor{
		measure: func(ctx context.Context) ([]PartitionLag, error) { return Measure(ctx, baseOpts, groups...) },
		attrsOf: func(l PartitionLag) attribute.Set {
			return attribute.NewSet(
				semconv.MessagingSystemKafka,
				semconv.MessagingConsumerGroupName(l.Group),
				semconv.MessagingDestinationName(l.Topic),
				semconv.MessagingDestinationPartitionID(strconv.Itoa(int(l.Partition))),
			)
		},
		what:       "consumer lag",
		interval:   cfg.Interval,
		health:     &healthGauges{},
		tracker:    NewTracker(cfg.Window),
		retentions: NewRetentions(baseOpts, cfg.RetentionRefresh),
	}
	return m.register(opts, gauge{otelnames.MetricLagRecords, otelnames.MetricLagRecordsUnit,
		"Records a consumer group has yet to consume on a partition: end offset minus committed offset."},
		gauge{otelnames.MetricLagSeconds, otelnames.MetricLagSecondsUnit,
			"Age of the oldest record a consumer group has yet to consume on a partition."})
}

// NewReaderMonitor returns a Monitor of r measuring with MeasureReader
// every cfg.Interval once Run is called (cfg.Groups must be empty), and
// registers its gauges on the meter provider of opts: by
// messaging.system, messaging.destination.name,
// messaging.destination.partition.id and kretrieve.index.name (r.Name),
//
//   - kretrieve.index.lag ({message}): PartitionLag.Records;
//   - kretrieve.index.lag.seconds (s): PartitionLag.Seconds.
func NewReaderMonitor(baseOpts []kgo.Opt, r Reader, cfg MonitorConfig, opts ...Option) (*Monitor, error) {
	if err := errors.Join(cfg.Validate(), r.Validate()); err != nil {
		return nil, err
	}
	if len(cfg.Groups) > 0 {
		return nil, errors.New("lag monitor: a reader's monitor measures no groups")
	}
	cfg, baseOpts = newConfig(cfg), slices.Clone(baseOpts)
	m := &Monitor{
		measure: func(ctx context.Context) ([]PartitionLag, error) { return MeasureReader(ctx, baseOpts, r) },
		attrsOf: func(l PartitionLag) attribute.Set {
			return attribute.NewSet(
				semconv.MessagingSystemKafka,
				semconv.MessagingDestinationName(l.Topic),
				semconv.MessagingDestinationPartitionID(strconv.Itoa(int(l.Partition))),
				otelnames.IndexName.String(l.Group),
			)
		},
		what:     "index lag",
		interval: cfg.Interval,
		tracker:  NewTracker(cfg.Window),
	}
	return m.register(opts, gauge{otelnames.MetricIndexLagRecords, otelnames.MetricLagRecordsUnit,
		"Records of the documents topic a worker's index has yet to apply on a partition: end offset minus the next offset to apply."},
		gauge{otelnames.MetricIndexLagSeconds, otelnames.MetricLagSecondsUnit,
			"Age of the oldest record of the documents topic a worker's index has yet to apply on a partition."})
}

// gauge names and describes one of a Monitor's gauges.
type gauge struct{ name, unit, description string }

// register creates m's gauges on the meter provider of opts and registers
// their callback.
func (m *Monitor) register(opts []Option, records, seconds gauge) (*Monitor, error) {
	o := newOptions(opts)
	m.logger, m.attrs = o.logger, map[attrKey]metric.ObserveOption{}
	meter := o.meterProvider.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	m.records, err = meter.Int64ObservableGauge(records.name, metric.WithUnit(records.unit), metric.WithDescription(records.description))
	if err != nil {
		return nil, fmt.Errorf("lag gauge: %w", err)
	}
	m.seconds, err = meter.Float64ObservableGauge(seconds.name, metric.WithUnit(seconds.unit), metric.WithDescription(seconds.description))
	if err != nil {
		return nil, fmt.Errorf("lag seconds gauge: %w", err)
	}
	instruments := []metric.Observable{m.records, m.seconds}
	if m.health != nil {
		if instruments, err = m.health.register(meter, instruments); err != nil {
			return nil, err
		}
	}
	m.reg, err = meter.RegisterCallback(m.observe, instruments...)
	if err != nil {
		return nil, fmt.Errorf("lag gauges callback: %w", err)
	}
	return m, nil
}

// Run measures immediately and then every interval until ctx is done, and
// returns nil then. Errors are logged (a failed measurement at warn, each
// group with entries that could not be measured at warn, a group with no
// commits yet once at info) and do not stop it.
func (m *Monitor) Run(ctx context.Context) error {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		lags, err := m.Update(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			m.logger.WarnContext(ctx, m.what+" not measured", "err", err)
		default:
			m.logEntryErrors(ctx, lags)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// logEntryErrors logs one line per group with entries that could not be
// measured, with the first error, at warn. A group that does not exist
// (kerr.GroupIDNotFound: nobody has committed in it yet, as on a fresh
// worker) is no failure: it is logged once at info, and at debug after.
func (m *Monitor) logEntryErrors(ctx context.Context, lags []PartitionLag) {
	for i := 0; i < len(lags); {
		group, failed, first := lags[i].Group, 0, error(nil)
		for ; i < len(lags) && lags[i].Group == group; i++ {
			if lags[i].Err != nil {
				failed++
				if first == nil {
					first = lags[i].Err
				}
			}
		}
		switch {
		case failed == 0:
			delete(m.uncommitted, group)
		case errors.Is(first, kerr.GroupIDNotFound) && m.uncommitted[group]:
			m.logger.DebugContext(ctx, "consumer group has no commits yet", "group", group)
		case errors.Is(first, kerr.GroupIDNotFound):
			if m.uncommitted == nil {
				m.uncommitted = map[string]bool{}
			}
			m.uncommitted[group] = true
			m.logger.InfoContext(ctx, "consumer group has no commits yet: its lag is measured once it commits", "group", group)
		default:
			m.logger.WarnContext(ctx, m.what+" partly measured", "group", group, "failed", failed, "err", first)
		}
	}
}

// Update takes one measurement now, makes it the one the gauges report and
// returns it. On error the gauges report nothing until the next successful
// measurement.
//
// Measurements may overlap (Run's, and an Update called besides it): one
// that started before the measurement the gauges report is returned but
// does not replace it, so an older lag never overwrites a newer one.
func (m *Monitor) Update(ctx context.Context) ([]PartitionLag, error) {
	started := time.Now()
	lags, err := m.measure(ctx)
	var retention map[string]time.Duration
	if err == nil {
		retention = m.retention(ctx, lags)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if started.Before(m.lastStarted) {
		return slices.Clone(lags), err
	}
	prevStarted, prevEnds := m.lastStarted, m.ends
	m.lastStarted = started
	if err != nil {
		m.last, m.obs, m.lastAt, m.ends = nil, nil, time.Time{}, nil
		return nil, err
	}
	m.lastAt = started
	m.bound(ctx, lags, prevStarted, prevEnds)
	for i, h := range m.tracker.Observe(started, lags, retention) {
		lags[i].Health = h
	}
	attrs := make(map[attrKey]metric.ObserveOption, len(lags))
	obs := make([]observation, 0, len(lags))
	ends := make(map[attrKey]int64, len(lags))
	for _, l := range lags {
		if l.Partition < 0 || (l.Records < 0 && l.Seconds < 0) {
			continue
		}
		k := attrKey{l.Group, l.Topic, l.Partition}
		a, ok := m.attrs[k]
		if !ok {
			a = metric.WithAttributeSet(m.attrsOf(l))
		}
		attrs[k] = a
		if l.End >= 0 {
			ends[k] = l.End
		}
		obs = append(obs, observation{records: l.Records, seconds: l.Seconds, health: l.Health, attrs: a})
	}
	// Keeping only the current partitions' sets bounds the cache.
	m.last, m.obs, m.attrs, m.ends = lags, obs, attrs, ends
	return slices.Clone(lags), nil
}

// bound bounds the lag in seconds by what this process's clock alone can
// tell: a partition's oldest unconsumed record (at the committed offset)
// that lay at or past the end offset listed by the previous measurement,
// which started at prevStarted, was produced after that, so it is at most
// now − prevStarted old, whatever its timestamp says. A timestamp older
// than that means its producer's clock is behind this process's (or this
// one's ahead): Seconds is cut to the bound and Skew says by how much it
// was over, logged at warn once per Monitor, at debug after. Called with
// m.mu held.
func (m *Monitor) bound(ctx context.Context, lags []PartitionLag, prevStarted time.Time, prevEnds map[attrKey]int64) {
	if prevStarted.IsZero() {
		return
	}
	limit := time.Since(prevStarted).Seconds()
	for i := range lags {
		l := &lags[i]
		end, ok := prevEnds[attrKey{l.Group, l.Topic, l.Partition}]
		if !ok || l.Records <= 0 || l.Committed < end || l.Seconds <= limit {
			continue
		}
		l.Skew, l.Seconds = l.Seconds-limit, limit
		log := m.logger.DebugContext
		if !m.skewLogged {
			m.skewLogged, log = true, m.logger.WarnContext
		}
		log(ctx, m.what+" in seconds bounded: record timestamps are behind this process's clock", "group", l.Group, "topic", l.Topic,
			"partition", l.Partition, "skew_seconds", l.Skew, "bound_seconds", limit)
	}
}

// Last returns the last measurement, nil before the first one and after a
// failed one.
func (m *Monitor) Last() []PartitionLag {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.last)
}

// LastAt returns the last measurement, as Last, and when it was taken
// (zero with no measurement).
func (m *Monitor) LastAt() ([]PartitionLag, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.last), m.lastAt
}

// Close unregisters the gauges' callback: the Monitor reports nothing after
// it. It does not stop Run.
func (m *Monitor) Close() error {
	return m.reg.Unregister()
}

func (m *Monitor) observe(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ob := range m.obs {
		if ob.records >= 0 {
			o.ObserveInt64(m.records, ob.records, ob.attrs)
		}
		if ob.seconds >= 0 {
			o.ObserveFloat64(m.seconds, ob.seconds, ob.attrs)
		}
		if m.health != nil {
			m.health.observe(o, ob.health, ob.attrs)
		}
	}
	return nil
}
