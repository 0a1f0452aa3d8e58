// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/topology"
	"github.com/kretrieve/kretrieve/tracing"
)

// commonConfig is what every command that talks to Kafka shares: the
// connection and its security, the topics, the producer's batching, the
// logging, and the inbound trace context flags of the commands they
// apply to.
type commonConfig struct {
	brokers           string
	clientID          string
	topics            messages.Topics
	partitions        int
	replicationFactor int
	linger            time.Duration
	compression       string
	metadataMaxAge    time.Duration
	metricsListen     string
	logFormat         string
	logLevel          string
	kafkaTLS          kafkaclient.TLSConfig
	sasl              kafkaclient.SASLConfig
	// Inbound trace context, declared by the commands it applies to.
	retrievalTrustBoundary bool
	trustedBaggage         string
	baggageAttributes      string
	// externalStage is --external-stage: NAME:OUTPUT, or "".
	externalStage string
}

// declareRetrievalTrustBoundary declares --<first stage>-trust-boundary
// (--retrieval-trust-boundary): pipeline.Config.RetrievalTrustBoundary,
// the trust boundary of the first stage, which reads what request
// producers publish.
func (c *commonConfig) declareRetrievalTrustBoundary(s *settings) {
	first := defaultTopology().Stages[0].Name
	s.boolean(&c.retrievalTrustBoundary, first+"-trust-boundary", false,
		first+" workers treat request producers as outside: a new trace per record, linked to the producer's, whose sampled flag is ignored")
}

// declareTrustedBaggage declares --trusted-baggage.
func (c *commonConfig) declareTrustedBaggage(s *settings) {
	s.str(&c.trustedBaggage, "trusted-baggage", "", "comma-separated baggage keys kept when a trust boundary drops inbound baggage")
}

// declareMetricsListen declares --metrics-listen, on the long-running
// commands (the workers, gateway and run).
func (c *commonConfig) declareMetricsListen(s *settings) {
	s.str(&c.metricsListen, "metrics-listen", "", "serve the process's metrics for Prometheus at http://ADDR/metrics, e.g. :9464 (empty: off)")
}

// telemetryOptions are the tracing options the command's flags ask for.
func (c commonConfig) telemetryOptions() []tracing.Option {
	if c.metricsListen == "" {
		return nil
	}
	return []tracing.Option{tracing.WithPrometheusListen(c.metricsListen)}
}

// declareBaggageAttributes declares --baggage-attributes.
func (c *commonConfig) declareBaggageAttributes(s *settings) {
	s.str(&c.baggageAttributes, "baggage-attributes", "", "comma-separated baggage keys copied onto process spans as kretrieve.baggage.<key> (baggage is never recorded otherwise)")
}

func (c *commonConfig) declare(s *settings, role, defaultBrokers string) {
	s.str(&c.brokers, "brokers", defaultBrokers, "comma-separated Kafka bootstrap brokers")
	s.str(&c.clientID, "client-id", "kretrieve-"+role, "Kafka client id (messaging.client.id)")
	s.str(&c.topics.Requests, "topic-requests", messages.DefaultRequestsTopic, "requests topic")
	s.str(&c.topics.Candidates, "topic-candidates", messages.DefaultCandidatesTopic, "candidates topic")
	s.str(&c.topics.Results, "topic-results", messages.DefaultResultsTopic, "results topic")
	s.str(&c.topics.Documents, "topic-documents", messages.DefaultDocumentsTopic, "documents topic (compacted): what the workers' indexes follow and `ingest` publishes to")
	s.integer(&c.partitions, "partitions", kafkaclient.DefaultPartitions, "partitions of topics created at start-up")
	s.integer(&c.replicationFactor, "replication-factor", kafkaclient.DefaultReplicationFactor, "replication factor of topics created at start-up (-1: broker default)")
	s.str(&c.compression, "compression", kafkaclient.DefaultCompression, "compression of produced batches: "+strings.Join(kafkaclient.Compressions, ", ")+" (none: every client reads it; a codec trades CPU for bytes on the wire)")
	s.duration(&c.linger, "linger", 0, "how long the producer waits to fill a batch: 0 sends at once (lowest latency); a few ms make fuller batches at a steady high rate, adding that much to every hop")
	s.duration(&c.metadataMaxAge, "metadata-max-age", kafkaclient.DefaultMetadataMaxAge, "how often Kafka clients refresh metadata (metadata.max.age.ms): partitions added to a topic are consumed within about this long")
	s.str(&c.externalStage, "external-stage", "", "NAME:OUTPUT: a stage whose workers run outside kretrieve (examples/python-stage), inserted after the first stage: it reads that stage's output topic, writes OUTPUT, which the next stage reads; its consumer group is NAME (empty: none)")
	declareLogging(s, &c.logFormat, &c.logLevel)
	c.declareSecurity(s)
}

// declareSecurity declares the Kafka TLS and SASL flags.
func (c *commonConfig) declareSecurity(s *settings) {
	s.boolean(&c.kafkaTLS.Enabled, "tls", false, "connect to Kafka over TLS (implied by --tls-ca-file, --tls-cert-file, --tls-server-name)")
	s.str(&c.kafkaTLS.CAFile, "tls-ca-file", "", "PEM bundle of the CAs that sign the brokers' certificates (default: the system roots)")
	s.str(&c.kafkaTLS.CertFile, "tls-cert-file", "", "PEM client certificate for mutual TLS (with --tls-key-file)")
	s.str(&c.kafkaTLS.KeyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	s.str(&c.kafkaTLS.ServerName, "tls-server-name", "", "name the brokers' certificates must carry (default: the broker's host)")
	s.str(&c.sasl.Mechanism, "sasl-mechanism", "", "SASL mechanism: "+strings.Join(kafkaclient.Mechanisms, ", ")+" (default: no SASL)")
	s.str(&c.sasl.Username, "sasl-username", "", "SASL user name")
	s.secret(&c.sasl.Password, "sasl-password", "SASL password; prefer the variable or --sasl-password-file (command lines are visible to other users)")
	s.str(&c.sasl.PasswordFile, "sasl-password-file", "", "file holding the SASL password, read at each authentication")
	s.boolean(&c.sasl.AllowPlainWithoutTLS, "sasl-plain-without-tls", false, "INSECURE: allow SASL PLAIN without TLS, sending the password in clear text")
}

func declareLogging(s *settings, format, level *string) {
	s.str(format, "log-format", "text", "log format: text or json")
	s.str(level, "log-level", "info", "log level: debug, info, warn or error")
}

func (c commonConfig) validate() error {
	var errs []error
	if err := c.topics.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.stages(); err != nil {
		errs = append(errs, err)
	}
	if c.partitions < 1 || c.partitions > 1<<20 {
		errs = append(errs, errors.New("partitions: must be at least 1"))
	}
	if c.replicationFactor < -1 || c.replicationFactor == 0 || c.replicationFactor > 1<<15-1 {
		errs = append(errs, errors.New("replication-factor: must be positive or -1"))
	}
	errs = append(errs, kafkaclient.Config{TLS: c.kafkaTLS, SASL: c.sasl, Linger: c.linger, Compression: c.compression, MetadataMaxAge: c.metadataMaxAge}.Validate()) // brokers: validateBrokers
	return errors.Join(errs...)
}

// secured reports whether any Kafka TLS or SASL setting is given.
func (c commonConfig) secured() bool {
	s := c.sasl
	return c.kafkaTLS.On() || s.Mechanism != "" || s.Username != "" || !s.Password.IsZero() || s.PasswordFile != "" || s.AllowPlainWithoutTLS
}

// checkKafka connects with the command's TLS and SASL settings and fails
// fast, with a message naming what to fix, when the brokers refuse them (a
// wrong password fails in seconds, not as silent retries). Brokers that do
// not answer are retried for a few seconds (kafkaclient.OneShot), then the
// command fails with one message naming them: the policy of a command that
// does one job and exits.
func checkKafka(ctx context.Context, p *pipeline.Pipeline) error {
	return waitKafka(ctx, p, kafkaclient.OneShot())
}

// ensureTopics checks the connection (checkKafka) and creates the
// pipeline topics that are missing, as far as the principal may.
func ensureTopics(ctx context.Context, p *pipeline.Pipeline) error {
	return connectKafka(ctx, p, kafkaclient.OneShot())
}

// ensureTopicsWhenReachable is ensureTopics for a long-running command (a
// worker, the gateway): brokers that do not answer are retried with
// backoff until they do, each retry logged at warn, so that a pod started
// before Kafka starts working by itself when Kafka appears. Security
// errors still fail at once.
func ensureTopicsWhenReachable(ctx context.Context, p *pipeline.Pipeline) error {
	return connectKafka(ctx, p, kafkaclient.UntilReachable())
}

// connectKafka waits for the brokers by policy, then creates the missing
// pipeline topics.
func connectKafka(ctx context.Context, p *pipeline.Pipeline, policy kafkaclient.RetryPolicy) error {
	if err := waitKafka(ctx, p, policy); err != nil {
		return err
	}
	return p.EnsureTopics(ctx)
}

// waitKafka runs kafkaclient.WaitCluster by policy and gives p the cluster
// id it learned, for the telemetry (messaging.kafka.cluster.id); an
// unreachable broker's error says how to point the command elsewhere.
func waitKafka(ctx context.Context, p *pipeline.Pipeline, policy kafkaclient.RetryPolicy) error {
	id, err := kafkaclient.WaitCluster(ctx, p.Config().Kafka, p.Logger(), policy)
	if errors.Is(err, kafkaclient.ErrUnreachable) {
		return fmt.Errorf("%w: is a broker running there? set --brokers or KRETRIEVE_BROKERS", err)
	}
	if err == nil {
		p.SetKafkaClusterID(id)
	}
	return err
}

// kafkaOptions is the one place the commands build franz-go options for a
// client of their own: p's connection settings and logger, kotel client
// metrics on mp when not nil, then extra.
func kafkaOptions(p *pipeline.Pipeline, mp metric.MeterProvider, extra ...kgo.Opt) []kgo.Opt {
	return append(kafkaclient.Options(p.Config().Kafka, p.Logger(), mp), extra...)
}

// kafkaConfig builds the Kafka connection configuration.
func (c commonConfig) kafkaConfig() kafkaclient.Config {
	return kafkaclient.Config{
		Brokers:           kafkaclient.ParseBrokers(c.brokers),
		ClientID:          c.clientID,
		Partitions:        int32(c.partitions),
		ReplicationFactor: int16(c.replicationFactor),
		TLS:               c.kafkaTLS,
		SASL:              c.sasl,
		Linger:            c.linger,
		Compression:       c.compression,
		MetadataMaxAge:    c.metadataMaxAge,
	}
}

// pipelineConfig builds the pipeline's settings.
func (c commonConfig) pipelineConfig(comp *component) pipeline.Config {
	p := comp.telemetry
	return pipeline.Config{
		Kafka:       c.kafkaConfig(),
		Stages:      c.stagesOrDefault(),
		Documents:   c.topics.Documents,
		ServiceName: p.ServiceName,
		// Unsampled records start no spans when the sampler is parent-based.
		ParentBasedSampling:    p.ParentBasedSampling,
		RootSampler:            p.RootSampler,
		RetrievalTrustBoundary: c.retrievalTrustBoundary,
		TrustedBaggage:         splitList(c.trustedBaggage),
		BaggageAttributes:      splitList(c.baggageAttributes),
	}
}

// validateBrokers requires at least one --brokers address.
func validateBrokers(brokers string) error {
	if len(kafkaclient.ParseBrokers(brokers)) == 0 {
		return errors.New("brokers: at least one address is required")
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping blanks: the
// parsing of --brokers (kafkaclient.ParseBrokers), used for every list.
func splitList(s string) []string { return kafkaclient.ParseBrokers(s) }

// defaultTopology is the binary's pipeline (pipeline.DefaultStages) over
// the default topics: the stage names and groups the commands and their
// help are made of.
func defaultTopology() topology.Topology {
	return commonConfig{topics: messages.DefaultTopics()}.topology()
}

// pipelineStages names the binary's stages (pipeline.DefaultStages): each
// is a worker command (kretrieve NAME) and a --NAME-workers flag of run.
func pipelineStages() []string {
	return defaultTopology().Names()
}

// defaultGroups is the stages' consumer groups, comma-separated: what lag
// and pathways measure by default.
func defaultGroups() string {
	return strings.Join(defaultTopology().Groups(), ",")
}

// topology is the binary's pipeline (pipeline.DefaultStages) over the
// configured topics.
func (c commonConfig) topology() topology.Topology {
	return pipeline.Config{Stages: c.stagesOrDefault(), Documents: c.topics.Documents}.Topology()
}

// stages is the binary's stage table: pipeline.DefaultStages over the
// configured topics, with --external-stage (NAME:OUTPUT) inserted after
// the first stage as a pipeline.ExternalStage.
func (c commonConfig) stages() ([]pipeline.Stage, error) {
	stages := pipeline.DefaultStages(c.topics)
	if c.externalStage == "" {
		return stages, nil
	}
	name, output, ok := strings.Cut(c.externalStage, ":")
	if !ok || name == "" || output == "" {
		return nil, fmt.Errorf("external-stage: %q is not NAME:OUTPUT (e.g. rescore:retrieval.rescored)", c.externalStage)
	}
	stages, err := pipeline.InsertStage(stages, stages[0].Name, pipeline.ExternalStage(name, output))
	if err != nil {
		return nil, fmt.Errorf("external-stage: %w", err)
	}
	return stages, nil
}

// stagesOrDefault is stages, or the default stages when --external-stage
// is invalid (validate reports it before any command uses the table).
func (c commonConfig) stagesOrDefault() []pipeline.Stage {
	stages, err := c.stages()
	if err != nil {
		return pipeline.DefaultStages(c.topics)
	}
	return stages
}
