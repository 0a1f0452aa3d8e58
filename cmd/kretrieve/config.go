package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/retrieval"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/topology"
	"github.com/kretrieve/kretrieve/tracing"
)

// commonConfig is what every command that talks to Kafka shares.
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
}

// declareRetrievalTrustBoundary declares --retrieval-trust-boundary.
func (c *commonConfig) declareRetrievalTrustBoundary(s *settings) {
	s.boolean(&c.retrievalTrustBoundary, "retrieval-trust-boundary", false,
		"retrieval workers treat request producers as outside: a new trace per record, linked to the producer's, whose sampled flag is ignored")
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
	s.integer(&c.partitions, "partitions", kafkaclient.DefaultPartitions, "partitions of topics created at start-up")
	s.integer(&c.replicationFactor, "replication-factor", kafkaclient.DefaultReplicationFactor, "replication factor of topics created at start-up (-1: broker default)")
	s.str(&c.compression, "compression", kafkaclient.DefaultCompression, "compression of produced batches: "+strings.Join(kafkaclient.Compressions, ", ")+" (none: every client reads it; a codec trades CPU for bytes on the wire)")
	s.duration(&c.linger, "linger", 0, "how long the producer waits to fill a batch: 0 sends at once (lowest latency); a few ms make fuller batches at a steady high rate, adding that much to every hop")
	s.duration(&c.metadataMaxAge, "metadata-max-age", kafkaclient.DefaultMetadataMaxAge, "how often Kafka clients refresh metadata (metadata.max.age.ms): partitions added to a topic are consumed within about this long")
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

// waitKafka runs kafkaclient.WaitReachable by policy; an unreachable
// broker's error says how to point the command elsewhere.
func waitKafka(ctx context.Context, p *pipeline.Pipeline, policy kafkaclient.RetryPolicy) error {
	err := kafkaclient.WaitReachable(ctx, p.Config().Kafka, p.Logger(), policy)
	if errors.Is(err, kafkaclient.ErrUnreachable) {
		return fmt.Errorf("%w: is a broker running there? set --brokers or KRETRIEVE_BROKERS", err)
	}
	return err
}

// start starts the logger and telemetry of a command talking to Kafka, as
// service "kretrieve-<role>", and returns them with the pipeline
// configuration. Flush the telemetry with component.flush.
func (c commonConfig) start(ctx context.Context, role string, stderr io.Writer, opts ...tracing.Option) (*component, pipeline.Config, error) {
	comp, err := startComponent(ctx, "kretrieve-"+role, c.logFormat, c.logLevel, stderr, append(opts, c.telemetryOptions()...)...)
	if err != nil {
		return nil, pipeline.Config{}, err
	}
	return comp, c.pipelineConfig(comp), nil
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
		Stages:      pipeline.DefaultStages(c.topics),
		ServiceName: p.ServiceName,
		// Unsampled records start no spans when the sampler is parent-based.
		ParentBasedSampling:    p.ParentBasedSampling,
		RetrievalTrustBoundary: c.retrievalTrustBoundary,
		TrustedBaggage:         splitList(c.trustedBaggage),
		BaggageAttributes:      splitList(c.baggageAttributes),
	}
}

// workerConfig configures the retrieval and enrichment commands.
type workerConfig struct {
	commonConfig
	worker          consumers.Config
	shutdownTimeout time.Duration
	index           string
	recordQueryText bool
	searchTimeout   time.Duration
	lagInterval     time.Duration
	pathways        pathwaysFlags
}

// declareIndex declares the flag naming the index directory.
func declareIndex(s *settings, p *string) {
	s.str(p, "index", "", "index DIR built by `kretrieve index` (default: build the Go standard library docs in memory)")
}

func declareRecordQueryText(s *settings, p *bool) {
	s.boolean(p, "record-query-text", false, "record query text on search spans (debugging only: queries are user data)")
}

// declareSearchTimeout declares the flag bounding one search of the
// retrieval stage.
func declareSearchTimeout(s *settings, p *time.Duration) {
	s.duration(p, "search-timeout", retrieval.DefaultSearchTimeout, "longest one search may take; a search that takes longer is run once more, and a request whose search takes longer twice is dead-lettered (0: no limit)")
}

// searchTimeout checks --search-timeout and returns it as
// retrieval.Config.SearchTimeout, where no limit is negative.
func searchTimeout(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, errors.New("search-timeout: must not be negative (0: no limit)")
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// flags declares the flags of a workerConfig on s and returns the check of
// their values, run once they are parsed.
func (c *workerConfig) flags(s *settings, role string) (check func(args []string) error) {
	c.declare(s, role, kafkaclient.DefaultBrokers)
	s.str(&c.worker.Group, "group", role, "consumer group")
	s.integer(&c.worker.Concurrency, "concurrency", 6, "records processed at once, each of a different partition (a partition's records are processed in order)")
	s.integer(&c.worker.MaxPollRecords, "max-poll-records", 500, "records taken per poll, and the most queued per partition (a full queue pauses its fetching)")
	fetchMax := 16 << 20
	s.integer(&fetchMax, "fetch-max-bytes", fetchMax, "largest fetch response buffered per broker")
	s.integer(&c.worker.Attempts, "attempts", 3, "attempts for a transient error before dead-lettering")
	s.duration(&c.worker.RetryBackoff, "retry-backoff", 100*time.Millisecond, "first retry delay (doubles up to 2s)")
	s.duration(&c.worker.SessionTimeout, "session-timeout", consumers.DefaultSessionTimeout, "how long the group waits for a crashed member (no heartbeat) before reassigning its partitions")
	s.duration(&c.worker.RebalanceTimeout, "rebalance-timeout", consumers.DefaultRebalanceTimeout, "how long a rebalance waits for every member to rejoin; a member killed mid-rebalance is dropped after it (the group uses its members' largest)")
	s.str(&c.worker.InstanceID, "instance-id", "", "static group membership under this id, unique in the group and stable across restarts (a pod's name): a restarted worker takes its partitions back at once; a stopped one keeps them until --session-timeout (empty: dynamic member)")
	s.duration(&c.worker.HeartbeatInterval, "heartbeat-interval", consumers.DefaultHeartbeatInterval, "how often the worker heartbeats, and so how soon it joins a rebalance (at most a third of --session-timeout)")
	s.integer(&c.worker.MaxRecordBytes, "max-record-bytes", consumers.DefaultMaxRecordBytes, "largest record (key + value) processed; larger ones are dead-lettered")
	s.integer(&c.worker.MaxHeaders, "max-headers", consumers.DefaultMaxHeaders, "most headers a record may carry; more are dead-lettered")
	s.integer(&c.worker.MaxHeaderBytes, "max-header-bytes", consumers.DefaultMaxHeaderBytes, "largest total of a record's header keys and values; more is dead-lettered")
	s.integer(&c.worker.MaxDeadLetterBytes, "max-dead-letter-bytes", consumers.DefaultMaxDeadLetterBytes, "largest dead letter (at least 4096); a bigger one keeps the start of the value and says so in kretrieve.dlq.truncated")
	s.duration(&c.shutdownTimeout, "shutdown-timeout", 10*time.Second, "bound on each step of a graceful stop: finishing the batch, committing and leaving the group, flushing spans")
	declareIndex(s, &c.index)
	s.duration(&c.lagInterval, "lag-interval", 15*time.Second, "how often to measure and export this group's lag (0: off)")
	c.pathways.declare(s)
	if role == "retrieval" {
		declareRecordQueryText(s, &c.recordQueryText)
		declareSearchTimeout(s, &c.searchTimeout)
		c.declareRetrievalTrustBoundary(s)
		c.declareTrustedBaggage(s)
	}
	c.declareBaggageAttributes(s)
	c.declareMetricsListen(s)
	return func(args []string) error {
		c.worker.CommitTimeout = c.shutdownTimeout
		c.worker.FetchMaxBytes = int32(min(max(fetchMax, 0), 1<<30))
		if st, ok := c.topology().Stage(role); ok {
			c.worker.Topic = st.Input
		}
		var errTimeout error
		c.searchTimeout, errTimeout = searchTimeout(c.searchTimeout)
		return errors.Join(c.validate(), validateBrokers(c.brokers), c.worker.Validate(), c.pathways.validate(), errTimeout)
	}
}

func validateBrokers(brokers string) error {
	if len(kafkaclient.ParseBrokers(brokers)) == 0 {
		return errors.New("brokers: at least one address is required")
	}
	return nil
}

// brokerConfig configures the broker command.
type brokerConfig struct {
	broker    broker.Config
	logFormat string
	logLevel  string
}

// flags declares the flags of a brokerConfig on s and returns the check of
// their values, run once they are parsed.
func (c *brokerConfig) flags(s *settings) (check func(args []string) error) {
	var (
		usersFile, superusers, aclRoles string
		users                           kafkaclient.Secret
	)
	s.str(&c.broker.Listen, "listen", broker.DefaultListen, "address to listen on")
	s.str(&c.broker.DataDir, "data-dir", "", "directory to persist topics, records and offsets in (default: memory only)")
	s.boolean(&c.broker.SyncWrites, "sync-writes", false, "fsync every produced batch (with --data-dir)")
	s.integer(&c.broker.DefaultPartitions, "partitions", kafkaclient.DefaultPartitions, "partitions of auto-created topics")
	declareLogging(s, &c.logFormat, &c.logLevel)
	s.str(&c.broker.TLSCertFile, "listen-tls-cert-file", "", "PEM server certificate: speak TLS only (with --listen-tls-key-file)")
	s.str(&c.broker.TLSKeyFile, "listen-tls-key-file", "", "PEM private key of --listen-tls-cert-file")
	s.str(&c.broker.TLSClientCAFile, "listen-tls-client-ca-file", "", "PEM CAs: require client certificates they sign (mutual TLS)")
	s.secret(&users, "sasl-users", "comma-separated USER:PASSWORD SASL users (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512); prefer the variable or --sasl-users-file")
	s.str(&usersFile, "sasl-users-file", "", "file of SASL users, one USER:PASSWORD a line (# comments)")
	s.str(&superusers, "superusers", "", "comma-separated SASL users that bypass ACLs")
	s.boolean(&c.broker.EnforceACLs, "acls", false, "enforce ACLs: refuse what no ACL allows (needs SASL users; superusers bypass); also creates the pipeline and pathways topics (default names), which roles may not")
	s.str(&aclRoles, "acl-roles", "", "comma-separated ROLE=USER: give USER the least-privilege ACLs of ROLE ("+strings.Join(kafkaacl.RoleNames(), ", ")+"; default topic and group names)")
	return func(args []string) error {
		var errs []error
		list, err := broker.ParseUsers(users.Reveal(), usersFile)
		if err != nil {
			errs = append(errs, err)
		}
		index := map[string]int{}
		for i, u := range list {
			index[u.Name] = i
		}
		for _, name := range splitList(superusers) {
			if i, ok := index[name]; ok {
				list[i].Superuser = true
			} else {
				errs = append(errs, fmt.Errorf("superusers: %q is not a SASL user", name))
			}
		}
		for _, pair := range splitList(aclRoles) {
			role, user, ok := strings.Cut(pair, "=")
			r, err := kafkaacl.Lookup(strings.TrimSpace(role), kafkaacl.DefaultNames())
			i, known := index[strings.TrimSpace(user)]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("acl-roles: %q is not ROLE=USER", pair))
			case err != nil:
				errs = append(errs, fmt.Errorf("acl-roles: %w", err))
			case !known:
				errs = append(errs, fmt.Errorf("acl-roles: %q is not a SASL user", strings.TrimSpace(user)))
			default:
				list[i].ACLs = append(list[i].ACLs, r.Rules...)
			}
		}
		c.broker.Users = list
		if c.broker.EnforceACLs {
			c.broker.Topics = kafkaacl.DefaultNames().AllTopics()
		}
		return errors.Join(append(errs, c.broker.Validate())...)
	}
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// produceConfig configures the produce command.
type produceConfig struct {
	commonConfig
	file    string
	topK    int
	wait    bool
	json    bool
	timeout time.Duration
	queries []string
	// pathways: with --wait, the requests' pathways are published (the
	// last window when produce ends).
	pathways pathwaysFlags
}

// flags declares the flags of a produceConfig on s and returns the check of
// their values, run once they are parsed.
func (c *produceConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "produce", kafkaclient.DefaultBrokers)
	s.str(&c.file, "file", "", "read queries from FILE, one per line (- for stdin)")
	s.integer(&c.topK, "top-k", messages.DefaultTopK, "documents per result")
	s.boolean(&c.wait, "wait", false, "wait for each request's result and print it")
	s.boolean(&c.json, "json", false, "print JSON lines")
	s.duration(&c.timeout, "timeout", 10*time.Second, "how long --wait waits for a result")
	c.pathways.declare(s)
	return func(args []string) error {
		c.queries = args
		var errs []error
		if len(c.queries) == 0 && c.file == "" {
			errs = append(errs, errors.New("give queries as arguments or --file"))
		}
		if c.topK < messages.MinTopK || c.topK > messages.MaxTopK {
			errs = append(errs, fmt.Errorf("top-k: must be between %d and %d", messages.MinTopK, messages.MaxTopK))
		}
		if c.timeout <= 0 {
			errs = append(errs, errors.New("timeout: must be positive"))
		}
		return errors.Join(append(errs, c.validate(), validateBrokers(c.brokers), c.pathways.validate())...)
	}
}

// runConfig configures the all-in-one run command.
type runConfig struct {
	commonConfig
	listen      string
	requests    int
	inFlight    int
	serve       bool
	hosts       string // --console-allowed-hosts
	summaryJSON string
	timeout     time.Duration
	replicas    map[string]*int // workers per stage: --STAGE-workers
	concurrency int
	gateway     gatewayFlags
	index       string
	recordQuery bool
	searchLimit time.Duration // --search-timeout
	spans       spansFileFlags
	pathways    pathwaysFlags
}

// flags declares the flags of a runConfig on s and returns the check of
// their values, run once they are parsed.
func (c *runConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "run", "")
	s.str(&c.listen, "listen", "127.0.0.1:0", "embedded broker address when --brokers is empty (port 0: any free port)")
	s.integer(&c.requests, "requests", 1000, "requests to send")
	s.integer(&c.inFlight, "in-flight", 200, "requests awaiting their result at once")
	s.boolean(&c.serve, "serve", false, "keep the broker and workers running after the requests and serve the HTTP gateway, until interrupted")
	declareConsoleAllowedHosts(s, &c.hosts, "console-allowed-hosts")
	c.gateway.declare(s)
	c.declareRetrievalTrustBoundary(s)
	c.declareTrustedBaggage(s)
	c.declareBaggageAttributes(s)
	c.declareMetricsListen(s)
	declareIndex(s, &c.index)
	declareRecordQueryText(s, &c.recordQuery)
	declareSearchTimeout(s, &c.searchLimit)
	s.str(&c.summaryJSON, "summary-json", "", "also write the summary as JSON to FILE (-: stdout, and the text summary to stderr)")
	c.spans.declare(s)
	s.duration(&c.timeout, "timeout", 30*time.Second, "how long to wait for each result")
	c.replicas = map[string]*int{}
	for _, name := range pipelineStages() {
		c.replicas[name] = new(int)
		s.integer(c.replicas[name], name+"-workers", 1, name+" workers")
	}
	s.integer(&c.concurrency, "concurrency", 6, "partitions each worker processes at once")
	c.pathways.declare(s)
	return func(args []string) error {
		var errs []error
		if c.requests < 0 {
			errs = append(errs, errors.New("requests: must not be negative"))
		}
		errs = append(errs, checkStdout("summary-json", c.summaryJSON, "spans-file", c.spans.path))
		if c.inFlight < 1 || c.concurrency < 1 {
			errs = append(errs, errors.New("in-flight and concurrency: must be at least 1"))
		}
		for _, name := range pipelineStages() {
			if *c.replicas[name] < 1 {
				errs = append(errs, fmt.Errorf("%s-workers: must be at least 1", name))
			}
		}
		if c.brokers == "" && c.secured() {
			errs = append(errs, errors.New("tls-* and sasl-* settings need --brokers: the embedded broker of run speaks plaintext without SASL (start `kretrieve broker` with TLS and SASL users instead)"))
		}
		var errTimeout error
		c.searchLimit, errTimeout = searchTimeout(c.searchLimit)
		errs = append(errs, errTimeout)
		c.gateway.timeout = c.timeout
		if c.serve {
			errs = append(errs, c.gateway.validate())
		} else if c.timeout <= 0 {
			errs = append(errs, errors.New("timeout: must be positive"))
		}
		return errors.Join(append(errs, c.validate(), c.spans.validate(), c.pathways.validate())...)
	}
}

// pipelineStages names the binary's stages (pipeline.DefaultStages): each
// is a worker command (kretrieve NAME) and a --NAME-workers flag of run.
func pipelineStages() []string {
	return commonConfig{topics: messages.DefaultTopics()}.topology().Names()
}

// workersPerStage returns the --STAGE-workers values.
func (c runConfig) workersPerStage() map[string]int {
	out := make(map[string]int, len(c.replicas))
	for name, n := range c.replicas {
		out[name] = *n
	}
	return out
}

// defaultGroups is the stages' consumer groups, comma-separated: what lag
// and pathways measure by default.
func defaultGroups() string {
	return strings.Join(commonConfig{topics: messages.DefaultTopics()}.topology().Groups(), ",")
}

// topology is the binary's pipeline (pipeline.DefaultStages) over the
// configured topics.
func (c commonConfig) topology() topology.Topology {
	return pipeline.Config{Stages: pipeline.DefaultStages(c.topics)}.Topology()
}

// pipeline builds the pipeline of pc with the component's logger, telemetry
// and messaging metrics.
func (comp *component) pipeline(pc pipeline.Config) (*pipeline.Pipeline, error) {
	t := comp.telemetry
	return pipeline.New(pc, pipeline.WithLogger(comp.logger), pipeline.WithTracerProvider(t.TracerProvider),
		pipeline.WithMeterProvider(t.MeterProvider), pipeline.WithPropagator(t.Propagator), pipeline.WithMetrics(comp.metrics))
}
