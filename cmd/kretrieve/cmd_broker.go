package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/tracing"
)

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
