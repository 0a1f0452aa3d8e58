// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/plugin/kotel"
	"github.com/twmb/franz-go/plugin/kslog"
	"go.opentelemetry.io/otel/metric"
)

// MaxLinger bounds Config.Linger: a longer linger only delays every record.
const MaxLinger = time.Second

// Defaults for Config.
const (
	DefaultBrokers           = "127.0.0.1:9092"
	DefaultPartitions        = 6
	DefaultReplicationFactor = -1 // the broker's default.replication.factor
	// DefaultCompression is Kafka's own producer default
	// (compression.type=none): every client can read the batches, none
	// needs a codec library.
	DefaultCompression = "none"
	// DefaultMetadataMaxAge is Config.MetadataMaxAge's default: partitions
	// added to a topic are consumed within about this long. One refresh
	// is one Metadata request per client (about 85 µs on the development
	// broker), so a few seconds cost nothing; franz-go's own default, 5
	// minutes, left new partitions unread that long.
	DefaultMetadataMaxAge = 5 * time.Second
)

// Bounds of Config.MetadataMaxAge: franz-go refuses more than an hour, and
// a refresh more often than every 100 ms is only load on the brokers.
const (
	MinMetadataMaxAge = 100 * time.Millisecond
	MaxMetadataMaxAge = time.Hour
)

// defaultMetadataMinAge is franz-go's own metadata min age, the least time
// between two metadata requests of a client: kept unless MetadataMaxAge is
// shorter (franz-go requires min age <= max age).
const defaultMetadataMinAge = 5 * time.Second

// Compressions are the values of Config.Compression, Kafka's
// compression.type names.
var Compressions = []string{"none", "gzip", "snappy", "lz4", "zstd"}

// Config is the connection and topic-creation configuration shared by every
// component.
type Config struct {
	// Brokers are the seed brokers. Default: DefaultBrokers.
	Brokers []string
	// ClientID is the Kafka client id, also messaging.client.id on spans.
	ClientID string
	// Partitions is the partition count of topics created at start-up.
	// Default: DefaultPartitions.
	Partitions int32
	// ReplicationFactor of topics created at start-up; -1 uses the broker's
	// default. Default: DefaultReplicationFactor.
	ReplicationFactor int16
	// TLS configures TLS to the brokers. Default: plaintext.
	TLS TLSConfig
	// SASL configures authentication. Default: none.
	SASL SASLConfig
	// Linger is how long the producer waits for more records before
	// sending a batch (kgo.ProducerLinger). 0, the default, sends at once:
	// the lowest latency per hop (franz-go's own default, 10 ms, adds
	// about 10 ms to every hop of an idle pipeline). A few milliseconds
	// make fuller batches under a steady high rate, at that cost in
	// latency; under load batches fill while a request is in flight
	// anyway (franz-go sends at most one produce request per partition at
	// a time), so 0 keeps throughput.
	Linger time.Duration
	// Compression is the codec of produced batches, one of Compressions.
	// Default: DefaultCompression, "none" (not franz-go's default, snappy,
	// which some clients cannot read without an extra library, e.g.
	// kafka-python without python-snappy). A codec trades producer and
	// consumer CPU for fewer bytes on the wire and on the brokers' disks.
	Compression string
	// MetadataMaxAge is how often every client refreshes its metadata
	// (kgo.MetadataMaxAge, Kafka's metadata.max.age.ms), and so the
	// longest a partition added to a topic waits before it is consumed:
	// a consumer group's leader rebalances onto it at its next refresh,
	// and a result collector checks its topics' partitions at this
	// interval (see results.Collector). Between MinMetadataMaxAge and
	// MaxMetadataMaxAge. Default: DefaultMetadataMaxAge.
	MetadataMaxAge time.Duration
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if len(c.Brokers) == 0 {
		c.Brokers = []string{DefaultBrokers}
	}
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = DefaultReplicationFactor
	}
	if c.Compression == "" {
		c.Compression = DefaultCompression
	}
	if c.MetadataMaxAge == 0 {
		c.MetadataMaxAge = DefaultMetadataMaxAge
	}
	return c
}

// Validate reports configuration errors: addresses and counts, TLS files
// that cannot be read or parsed, and SASL settings that are incomplete or
// unsafe (PLAIN without TLS unless SASL.AllowPlainWithoutTLS). Errors never
// contain the password.
func (c Config) Validate() error {
	var errs []error
	for _, b := range c.Brokers {
		if strings.TrimSpace(b) == "" {
			errs = append(errs, errors.New("brokers: empty address"))
		}
	}
	if c.Partitions < 0 {
		errs = append(errs, errors.New("partitions: must be positive"))
	}
	if c.ReplicationFactor < -1 {
		errs = append(errs, errors.New("replication factor: must be positive or -1"))
	}
	if c.Linger < 0 || c.Linger > MaxLinger {
		errs = append(errs, fmt.Errorf("linger: must be between 0 and %s", MaxLinger))
	}
	if m := c.MetadataMaxAge; m != 0 && (m < MinMetadataMaxAge || m > MaxMetadataMaxAge) {
		errs = append(errs, fmt.Errorf("metadata max age: must be between %s and %s", MinMetadataMaxAge, MaxMetadataMaxAge))
	}
	if _, ok := compressionCodec(c.Compression); !ok {
		errs = append(errs, fmt.Errorf("compression: %q is not one of %s", c.Compression, strings.Join(Compressions, ", ")))
	}
	errs = append(errs, c.TLS.validate(), c.SASL.validate(c.TLS.On()))
	return errors.Join(errs...)
}

// ParseBrokers splits a comma-separated broker list, dropping blanks.
func ParseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// Options returns franz-go options for c: seed brokers, client id, the
// retry backoff (RetryBackoff), linger
// and compression of produced batches, the metadata refresh interval, TLS
// and SASL, franz-go's own logs
// through kslog at warn and above, kotel's broker connection metrics on mp
// (when not nil, see [BrokerMeter]), and the given hooks (typically a
// kafkatrace.Tracer). Call c.Validate first: a TLS file that cannot be read
// here makes every connection fail with that error.
func Options(c Config, logger *slog.Logger, mp metric.MeterProvider, hooks ...kgo.Hook) []kgo.Opt {
	c = c.WithDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.WithLogger(warnLogger{kslog.New(logger.With("component", "franz-go"))}),
		kgo.RetryBackoffFn(RetryBackoff),
	}
	if c.ClientID != "" {
		opts = append(opts, kgo.ClientID(c.ClientID))
	}
	opts = append(opts, kgo.ProducerLinger(c.Linger),
		kgo.MetadataMaxAge(c.MetadataMaxAge), kgo.MetadataMinAge(min(c.MetadataMaxAge, defaultMetadataMinAge)))
	if codec, ok := compressionCodec(c.Compression); ok {
		opts = append(opts, kgo.ProducerBatchCompression(codec))
	}
	opts = append(opts, securityOptions(c)...)
	if mp != nil {
		hooks = append(hooks, BrokerMeter(mp))
	}
	if len(hooks) > 0 {
		opts = append(opts, kgo.WithHooks(hooks...))
	}
	return opts
}

// compressionCodec returns the codec named name ("" is the default).
func compressionCodec(name string) (kgo.CompressionCodec, bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "none":
		return kgo.NoCompression(), true
	case "gzip":
		return kgo.GzipCompression(), true
	case "snappy":
		return kgo.SnappyCompression(), true
	case "lz4":
		return kgo.Lz4Compression(), true
	case "zstd":
		return kgo.ZstdCompression(), true
	}
	return kgo.CompressionCodec{}, false
}

// BrokerMeter returns kotel's meter reduced to its broker connection
// metrics: messaging.kafka.connects.count, connect_errors.count,
// disconnects.count, write_errors.count, write_bytes, read_errors.count
// and read_bytes.count, by broker, which kafkatrace does not record. kotel's
// per-batch produce and fetch hooks are left out: they count produced and
// fetched records (and their bytes) a second time, under the old
// messaging.kafka.{produce,fetch}_{records,bytes}.count names, besides
// kafkatrace's semantic-convention messaging.client.sent.messages and
// messaging.client.consumed.messages. The byte counters have the UCUM
// unit "By" (kotel says "by"), so Prometheus names end in _bytes_total.
func BrokerMeter(mp metric.MeterProvider) kgo.Hook {
	return brokerMeter{kotel.NewMeter(kotel.MeterProvider(ucumMeterProvider{mp}))}
}

// brokerMeter implements only the broker hooks of kotel's meter: franz-go
// calls the hook interfaces a hook value implements, and this one does not
// implement HookProduceBatchWritten or HookFetchBatchRead.
type brokerMeter struct{ m *kotel.Meter }

var (
	_ kgo.HookBrokerConnect    = brokerMeter{}
	_ kgo.HookBrokerDisconnect = brokerMeter{}
	_ kgo.HookBrokerWrite      = brokerMeter{}
	_ kgo.HookBrokerRead       = brokerMeter{}
)

func (b brokerMeter) OnBrokerConnect(meta kgo.BrokerMetadata, d time.Duration, c net.Conn, err error) {
	b.m.OnBrokerConnect(meta, d, c, err)
}

func (b brokerMeter) OnBrokerDisconnect(meta kgo.BrokerMetadata, c net.Conn) {
	b.m.OnBrokerDisconnect(meta, c)
}

func (b brokerMeter) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, n int, wait, write time.Duration, err error) {
	b.m.OnBrokerWrite(meta, key, n, wait, write, err)
}

func (b brokerMeter) OnBrokerRead(meta kgo.BrokerMetadata, key int16, n int, wait, read time.Duration, err error) {
	b.m.OnBrokerRead(meta, key, n, wait, read, err)
}

// warnLogger caps franz-go's log level at warn: its info and debug logs are
// per-request chatter.
type warnLogger struct{ *kslog.Logger }

func (warnLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

// EnsureTopics creates the topics that do not exist yet with c's partition
// count and replication factor. Topics that exist are left as they are.
//
// A principal without CREATE permission (least-privilege ACLs) cannot create
// topics, even existing ones; for those EnsureTopics checks that the topic
// exists instead, and fails when it does not. A topic the principal may
// neither create nor describe is none of its business and is skipped: every
// topic it reads or writes is describable (READ and WRITE imply DESCRIBE).
func EnsureTopics(ctx context.Context, client *kgo.Client, c Config, topics ...string) error {
	_, err := ensureTopics(ctx, client, c, nil, topics...)
	return err
}

// ensureTopics is EnsureTopics creating the topics with configs (nil:
// the broker's defaults); created lists the topics this call created.
func ensureTopics(ctx context.Context, client *kgo.Client, c Config, configs map[string]*string, topics ...string) (created []string, err error) {
	c = c.WithDefaults()
	adm := kadm.NewClient(client)
	resps, err := adm.CreateTopics(ctx, c.Partitions, c.ReplicationFactor, configs, topics...)
	if err != nil {
		return nil, fmt.Errorf("create topics: %w", err)
	}
	var (
		errs    []error
		refused []string
	)
	for _, r := range resps.Sorted() {
		switch {
		case r.Err == nil:
			created = append(created, r.Topic)
		case errors.Is(r.Err, kerr.TopicAlreadyExists):
		case errors.Is(r.Err, kerr.TopicAuthorizationFailed), errors.Is(r.Err, kerr.ClusterAuthorizationFailed):
			refused = append(refused, r.Topic)
		default:
			errs = append(errs, fmt.Errorf("create topic %s: %w", r.Topic, r.Err))
		}
	}
	if len(refused) == 0 {
		return created, errors.Join(errs...)
	}
	// kadm's ListTopics fails as a whole on one unauthorized topic: ask
	// for metadata directly to learn about each.
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range refused {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, client)
	if err != nil {
		return created, errors.Join(append(errs, fmt.Errorf("describe topics: %w", err))...)
	}
	found := map[string]error{}
	for _, rt := range resp.Topics {
		if rt.Topic != nil {
			found[*rt.Topic] = kerr.ErrorForCode(rt.ErrorCode)
		}
	}
	for _, t := range refused {
		err, ok := found[t]
		switch {
		case ok && err == nil:
			// Exists: nothing to create.
		case errors.Is(err, kerr.TopicAuthorizationFailed):
			// Neither CREATE nor DESCRIBE: not a topic this principal uses.
		case !ok || errors.Is(err, kerr.UnknownTopicOrPartition):
			errs = append(errs, fmt.Errorf("topic %s does not exist and this principal is not authorized to create it: create it as an administrator", t))
		default:
			errs = append(errs, fmt.Errorf("describe topic %s: %w", t, err))
		}
	}
	return created, errors.Join(errs...)
}

// ReadOnly returns opts for a client that never produces, with a producer
// codec list of its own. kgo.NewClient deduplicates its options' codec list
// in place (kgo.DefaultCompressor writes it), so clients made at once from
// the same shared options (Options sets a codec list) race on that list;
// a client that reads only does not need it.
func ReadOnly(opts []kgo.Opt) []kgo.Opt {
	return slices.Concat(opts, []kgo.Opt{kgo.ProducerBatchCompression(kgo.NoCompression())})
}
