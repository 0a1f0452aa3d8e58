// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/internal/servertls"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// DefaultListen is the address the broker listens on by default.
const DefaultListen = "127.0.0.1:9092"

// Config configures an embedded broker.
type Config struct {
	// Listen is the host:port to listen on; port 0 picks a free port.
	// Default: DefaultListen.
	Listen string
	// DataDir, when set, persists topics, records, groups and offsets in
	// this directory and reloads them on start. It and everything in it
	// are made owner-only (directories 0700, files 0600) at start and
	// close: it holds the SASL users' credentials. Default: in memory only.
	DataDir string
	// SyncWrites fsyncs every produced batch when DataDir is set. Default: off
	// (the OS page cache, like Kafka's default flush policy).
	SyncWrites bool
	// DefaultPartitions is the partition count of auto-created topics.
	// Default: 6.
	DefaultPartitions int
	// Logger receives the broker's warnings. Default: slog.Default().
	Logger *slog.Logger

	// TLSCertFile and TLSKeyFile (PEM) make the listener speak TLS only.
	// Default: plaintext.
	TLSCertFile, TLSKeyFile string
	// TLSClientCAFile (PEM) makes the listener require client certificates
	// signed by these CAs (mutual TLS). Needs TLSCertFile. Default: none.
	TLSClientCAFile string
	// Users are the SASL users; with any, every connection must
	// authenticate with SASL (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, each
	// user can use all three). Default: no SASL.
	Users []User
	// AuthTimeout closes a connection that has not authenticated this long
	// after it was accepted (TLS handshake included). Only with Users.
	// Default: DefaultAuthTimeout.
	AuthTimeout time.Duration
	// MaxUnauthenticated caps the connections that have not authenticated
	// yet; the listener closes a new connection beyond it at once. Only
	// with Users. Default: DefaultMaxUnauthenticated.
	MaxUnauthenticated int
	// MaxUnauthenticatedPerHost caps them per source host, so that one
	// host cannot take them all. Default: DefaultMaxUnauthenticatedPerHost.
	MaxUnauthenticatedPerHost int
	// EnforceACLs refuses every request no ACL allows; superusers bypass
	// ACLs. Needs Users (principals come from SASL). Default: off.
	EnforceACLs bool
	// Topics are created at start (with DefaultPartitions) when the broker
	// is new, for principals that may not create topics. Default: none.
	Topics []string
	// CompactedTopics are created at start like Topics, with
	// cleanup.policy=compact (the documents topic) and no time or size
	// retention, when absent. Default: none.
	CompactedTopics []string
	// Retention is how long the records of a topic without a retention of
	// its own are kept. Default: DefaultRetention; negative: for ever.
	Retention time.Duration
	// RetentionBytes is the most a partition of such a topic keeps.
	// Default: DefaultRetentionBytes; negative: no limit.
	RetentionBytes int64
	// RetentionCheckInterval is how often retention and compaction run.
	// Default: DefaultRetentionCheckInterval.
	RetentionCheckInterval time.Duration
}

// User is a SASL user of the broker.
type User struct {
	Name     string
	Password kafkaclient.Secret
	// Superuser bypasses ACLs.
	Superuser bool
	// ACLs are the user's ALLOW rules, in effect with EnforceACLs. They
	// seed a new broker; a broker reloaded from DataDir keeps the ACLs it
	// had.
	ACLs []kafkaacl.Rule
}

// Validate reports configuration errors.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := splitListen(c.listen()); err != nil {
		errs = append(errs, err)
	}
	if c.RetentionCheckInterval < 0 {
		errs = append(errs, errors.New("retention check interval must not be negative"))
	}
	if c.AuthTimeout < 0 || c.MaxUnauthenticated < 0 || c.MaxUnauthenticatedPerHost < 0 {
		errs = append(errs, errors.New("auth timeout and unauthenticated connection caps must not be negative"))
	}
	if c.DefaultPartitions < 0 {
		errs = append(errs, errors.New("default partitions must not be negative"))
	}
	if _, err := c.tlsConfig(); err != nil {
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	for _, u := range c.Users {
		switch {
		case u.Name == "" || strings.ContainsAny(u.Name, ":,= \t\n"):
			errs = append(errs, fmt.Errorf("sasl user %q: a name without ':', ',', '=' or spaces is required", u.Name))
		case u.Password.IsZero():
			errs = append(errs, fmt.Errorf("sasl user %s: empty password", u.Name))
		case seen[u.Name]:
			errs = append(errs, fmt.Errorf("sasl user %s: given twice", u.Name))
		}
		seen[u.Name] = true
		if len(u.ACLs) > 0 && !c.EnforceACLs {
			errs = append(errs, fmt.Errorf("sasl user %s has ACLs but ACLs are not enforced", u.Name))
		}
	}
	if c.EnforceACLs && len(c.Users) == 0 {
		errs = append(errs, errors.New("enforcing ACLs needs SASL users: principals come from SASL"))
	}
	return errors.Join(errs...)
}

// tlsConfig returns the listener's TLS configuration, or nil for plaintext.
func (c Config) tlsConfig() (*tls.Config, error) {
	return servertls.Load(c.TLSCertFile, c.TLSKeyFile, c.TLSClientCAFile)
}

// securityOpts returns the kfake options for SASL users and ACLs. TLS and
// the SASL guard are the listener's (Start).
func (c Config) securityOpts() []kfake.Opt {
	var opts []kfake.Opt
	if len(c.Users) > 0 {
		opts = append(opts, kfake.EnableSASL())
	}
	if c.EnforceACLs {
		opts = append(opts, kfake.EnableACLs())
	}
	for _, u := range c.Users {
		pass := u.Password.Reveal()
		for i, mech := range kafkaclient.Mechanisms {
			if u.Superuser {
				opts = append(opts, kfake.Superuser(mech, u.Name, pass))
				continue
			}
			var acls []kfake.ACL
			if i == 0 {
				for _, r := range u.ACLs {
					acls = append(acls, kfake.ACL{
						Resource:  r.Resource,
						Name:      r.Name,
						Pattern:   kmsg.ACLResourcePatternTypeLiteral,
						Operation: r.Operation,
						Allow:     true,
					})
				}
			}
			opts = append(opts, kfake.User(mech, u.Name, pass, acls...))
		}
	}
	return opts
}

func (c Config) listen() string {
	if c.Listen == "" {
		return DefaultListen
	}
	return c.Listen
}

func splitListen(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: invalid port", addr)
	}
	return host, port, nil
}

// Broker is a running embedded broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
	dataDir string
	logger  *slog.Logger
	guard   *saslGuard // nil without SASL users
	cleaner *cleaner
}

// Start starts a broker. Close stops it.
func Start(cfg Config) (*Broker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := splitListen(cfg.listen())
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	partitions := cfg.DefaultPartitions
	if partitions == 0 {
		partitions = 6
	}
	tc, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	var guard *saslGuard
	if len(cfg.Users) > 0 {
		guard = newSASLGuard(cfg.Users, newAuthGate(cfg, logger), logger)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			// kfake asks for 127.0.0.1:port; listen on the configured host instead.
			l, err := net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				return nil, err
			}
			// TLS here rather than kfake.TLS, so that the SASL guard
			// reads the requests in clear.
			if tc != nil {
				l = tls.NewListener(l, tc)
			}
			if guard != nil {
				l = guard.listener(l)
			}
			return newRetryingListener(l, logger), nil
		}),
		kfake.DefaultNumPartitions(partitions),
		// Like Kafka's auto.create.topics.enable=true default.
		kfake.AllowAutoTopicCreation(),
		kfake.WithLogger(kfakeLogger{logger}),
	}
	opts = append(opts, cfg.securityOpts()...)
	opts = append(opts, cfg.retentionOpts()...)
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(partitions), cfg.Topics...))
	}
	if cfg.DataDir != "" {
		if err := secureDataDir(cfg.DataDir, logger); err != nil {
			return nil, err
		}
		opts = append(opts, kfake.DataDir(cfg.DataDir))
		if cfg.SyncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start broker: %w", err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) == 0 {
		c.Close()
		return nil, errors.New("start broker: no listener")
	}
	warnUnprotectedCompacted(c, cfg, logger)
	if err := createCompacted(c, cfg.CompactedTopics, int32(partitions)); err != nil {
		c.Close()
		return nil, fmt.Errorf("start broker: %w", err)
	}
	return &Broker{cluster: c, addr: addrs[0], dataDir: cfg.DataDir, logger: logger, guard: guard,
		cleaner: startCleaner(c, cfg.retentionCheck())}, nil
}

// createCompacted creates the topics c does not have yet, compacted.
func createCompacted(c *kfake.Cluster, topics []string, partitions int32) error {
	for _, t := range topics {
		if c.TopicInfo(t) != nil {
			continue
		}
		if err := c.CreateTopic(t, partitions, compactedConfig()); err != nil {
			return fmt.Errorf("create %s: %w", t, err)
		}
	}
	return nil
}

// Addr returns the host:port clients connect to.
func (b *Broker) Addr() string { return b.addr }

// Cluster returns the underlying kfake cluster, for tests that inject faults.
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker, flushing persisted state when DataDir is set
// (directories 0700, files 0600).
func (b *Broker) Close() {
	b.cleaner.close()
	b.cluster.Close()
	if b.dataDir != "" {
		if err := secureDataDir(b.dataDir, b.logger); err != nil {
			b.logger.Warn("broker: cannot restrict the data directory's modes", "err", err, "component", "broker")
		}
	}
}

// kfakeLogger forwards kfake's warnings and errors to slog.
type kfakeLogger struct{ l *slog.Logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, msg string, args ...any) {
	var lvl slog.Level
	switch level {
	case kfake.LogLevelError:
		lvl = slog.LevelError
	case kfake.LogLevelWarn:
		lvl = slog.LevelWarn
	default:
		return
	}
	k.l.Log(context.Background(), lvl, fmt.Sprintf(msg, args...), "component", "broker")
}
