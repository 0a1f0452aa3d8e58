// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/tracing"
)

// brokerCommand is "kretrieve broker".
func (e *cli) brokerCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "broker",
		GroupID: "pipeline",
		Short:   "Embedded development broker (kfake)",
		Long: `Serve a Kafka-compatible development broker (kfake) until interrupted, in
memory or persisted with --data-dir; it prints its address on stdout. With
--listen-tls-cert-file it speaks TLS, with SASL users it authenticates, and
with --acls it enforces least-privilege ACLs.`,
		Example: `  kretrieve broker
  kretrieve broker --listen 127.0.0.1:9092 --data-dir /var/lib/kretrieve`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c brokerConfig) error { return runBroker(ctx, c, e.stdout, e.stderr) }))
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
		retentionBytes                  int
	)
	s.str(&c.broker.Listen, "listen", broker.DefaultListen, "address to listen on")
	s.str(&c.broker.DataDir, "data-dir", "", "directory to persist topics, records and offsets in (default: memory only)")
	s.boolean(&c.broker.SyncWrites, "sync-writes", false, "fsync every produced batch (with --data-dir)")
	s.integer(&c.broker.DefaultPartitions, "partitions", kafkaclient.DefaultPartitions, "partitions of auto-created topics")
	s.duration(&c.broker.Retention, "retention", broker.DefaultRetention, "how long a topic without a retention of its own keeps its records (negative: for ever); the compacted topics the broker or kretrieve create keep every record")
	s.integer(&retentionBytes, "retention-bytes", broker.DefaultRetentionBytes, "most bytes a partition of such a topic keeps (negative: no limit)")
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
		c.broker.RetentionBytes = int64(retentionBytes)
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
			names := kafkaacl.DefaultNames()
			for _, t := range names.AllTopics() {
				if t != names.Topology.Documents {
					c.broker.Topics = append(c.broker.Topics, t)
				}
			}
			c.broker.CompactedTopics = []string{names.Topology.Documents}
		}
		return errors.Join(append(errs, c.broker.Validate())...)
	}
}

// runBroker serves an embedded broker until ctx is done.
func runBroker(ctx context.Context, cfg brokerConfig, stdout, stderr io.Writer) error {
	logger, err := tracing.NewLogger(stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	cfg.broker.Logger = logger
	b, err := broker.Start(cfg.broker)
	if err != nil {
		return err
	}
	defer b.Close()
	logger.Info("broker listening", "addr", b.Addr(), "data_dir", cfg.broker.DataDir,
		"tls", cfg.broker.TLSCertFile != "", "mtls", cfg.broker.TLSClientCAFile != "",
		"sasl_users", len(cfg.broker.Users), "acls", cfg.broker.EnforceACLs)
	fmt.Fprintln(stdout, b.Addr())
	<-ctx.Done()
	logger.Info("broker stopping")
	return nil
}
