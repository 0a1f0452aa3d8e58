package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// DefaultListen is the address the broker listens on by default.
const DefaultListen = "127.0.0.1:9092"

// Config configures an embedded broker.
type Config struct {
	// Listen is the host:port to listen on; port 0 picks a free port.
	// Default: DefaultListen.
	Listen string
	// DataDir, when set, persists topics, records, groups and offsets in
	// this directory and reloads them on start. Default: in memory only.
	DataDir string
	// SyncWrites fsyncs every produced batch when DataDir is set. Default: off
	// (the OS page cache, like Kafka's default flush policy).
	SyncWrites bool
	// DefaultPartitions is the partition count of auto-created topics.
	// Default: 6.
	DefaultPartitions int
	// Logger receives the broker's warnings. Default: slog.Default().
	Logger *slog.Logger
}

// Validate reports configuration errors.
func (c Config) Validate() error {
	if _, _, err := splitListen(c.listen()); err != nil {
		return err
	}
	if c.DefaultPartitions < 0 {
		return errors.New("default partitions must not be negative")
	}
	return nil
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
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			// kfake asks for 127.0.0.1:port; listen on the configured host instead.
			return net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
		}),
		kfake.DefaultNumPartitions(partitions),
		// Like Kafka's auto.create.topics.enable=true default.
		kfake.AllowAutoTopicCreation(),
		kfake.WithLogger(kfakeLogger{logger}),
	}
	if cfg.DataDir != "" {
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
	return &Broker{cluster: c, addr: addrs[0]}, nil
}

// Addr returns the host:port clients connect to.
func (b *Broker) Addr() string { return b.addr }

// Cluster returns the underlying kfake cluster, for tests that inject faults.
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker, flushing persisted state when DataDir is set.
func (b *Broker) Close() { b.cluster.Close() }

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
