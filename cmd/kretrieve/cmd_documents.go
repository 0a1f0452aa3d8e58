package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// documentsCommand is "kretrieve documents" and its verify subcommand.
func (e *cli) documentsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "documents verify",
		GroupID: "tools",
		Short:   "Check the workers' documents against the documents topic",
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				cmd.SetOut(e.stderr)
				_ = cmd.Help()
				return errors.New("documents: missing subcommand: verify")
			}
			return fmt.Errorf("documents: unknown subcommand %q (see kretrieve documents --help)", args[0])
		},
	}
	cmd.AddCommand(e.command(&cobra.Command{
		Use:   "verify --worker URL [--worker URL]...",
		Short: "Compare each worker's documents (GET /v1/index) with the documents topic's final state",
		Long: `Read the documents topic to its end and compare its final state (the latest
version of every document id, tombstones deleting) with what each worker reports
at GET /v1/index (serve it with the worker's --health-listen): a worker that has
applied the topic up to the same offsets must hold the same documents, which
their digests (an order-free hash of every id and version) show. A worker still
behind is reported as such (--catch-up-timeout polls until it catches up).

It exits non-zero when a worker's documents differ, a worker cannot be reached
or (with --catch-up-timeout) is still behind, and says how many.`,
		Example: `  kretrieve documents verify --worker http://retrieval-0:8081 --worker http://enrichment-0:8081
  kretrieve documents verify --worker http://127.0.0.1:8081 --catch-up-timeout 30s`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c verifyConfig) error { return runVerify(ctx, c, e.stdout, e.stderr) })))
	return cmd
}

// verifyConfig configures documents verify.
type verifyConfig struct {
	commonConfig
	workers []string
	wait    time.Duration
}

// flags declares the flags of a verifyConfig on s and returns the check of
// their values, run once they are parsed.
func (c *verifyConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "documents", kafkaclient.DefaultBrokers)
	s.list(&c.workers, "worker", "base URL of a worker's --health-listen server, e.g. http://127.0.0.1:8081 (repeat for each worker)")
	s.duration(&c.wait, "catch-up-timeout", 0, "how long to wait for workers behind the topic to catch up (0: report them as behind at once)")
	return func(args []string) error {
		errs := []error{c.validate(), validateBrokers(c.brokers)}
		if len(c.workers) == 0 {
			errs = append(errs, errors.New("worker: at least one --worker URL is required"))
		}
		for _, w := range c.workers {
			if !strings.HasPrefix(w, "http://") && !strings.HasPrefix(w, "https://") {
				errs = append(errs, fmt.Errorf("worker %q: want an http:// or https:// URL", w))
			}
		}
		if c.wait < 0 {
			errs = append(errs, errors.New("catch-up-timeout: must not be negative"))
		}
		return errors.Join(errs...)
	}
}

// verdict is one worker's comparison with the topic.
type verdict struct {
	worker string
	status docfeed.Status
	behind int64
	err    error
	state  string // "match", "behind", "MISMATCH", "unreachable"
}

// runVerify reads the topic's final state and compares every worker with it.
func runVerify(ctx context.Context, cfg verifyConfig, stdout, stderr io.Writer) error {
	return command{role: "documents", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		topic := p.Topology().Documents
		hashes, ends, err := readDocumentState(ctx, kafkaOptions(p, nil), topic, comp.logger)
		if err != nil {
			return fmt.Errorf("read the documents topic %s: %w", topic, err)
		}
		var want search.Digest
		for id, h := range hashes {
			want.Add(id, h)
		}
		fmt.Fprintf(stdout, "topic %s: %d documents, digest %s\n", topic, want.Count, want)
		deadline := time.Now().Add(cfg.wait)
		verdicts := make([]verdict, len(cfg.workers))
		for i, w := range cfg.workers {
			verdicts[i] = compareWorker(ctx, w, ends, want, deadline)
		}
		return printVerdicts(stdout, verdicts)
	})
}

// compareWorker fetches worker's status, until deadline while it is behind
// ends, and compares its digest with want once it is at ends.
func compareWorker(ctx context.Context, worker string, ends map[int32]int64, want search.Digest, deadline time.Time) verdict {
	v := verdict{worker: worker}
	for {
		v.status, v.err = fetchIndexStatus(ctx, worker)
		if v.err != nil {
			v.state = "unreachable"
			return v
		}
		v.behind = 0
		for p, end := range ends {
			v.behind += max(end-v.status.Offsets[p], 0)
		}
		if v.behind == 0 || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			v.err, v.state = ctx.Err(), "unreachable"
			return v
		case <-time.After(200 * time.Millisecond):
		}
	}
	switch {
	case v.behind > 0:
		v.state = "behind"
	case v.status.Digest == want.String():
		v.state = "match"
	default:
		v.state = "MISMATCH"
	}
	return v
}

// fetchIndexStatus is GET worker/v1/index.
func fetchIndexStatus(ctx context.Context, worker string) (docfeed.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(worker, "/")+"/v1/index", nil)
	if err != nil {
		return docfeed.Status{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return docfeed.Status{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return docfeed.Status{}, fmt.Errorf("GET /v1/index: %s", resp.Status)
	}
	var s docfeed.Status
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&s); err != nil {
		return docfeed.Status{}, fmt.Errorf("GET /v1/index: %w", err)
	}
	return s, nil
}

// printVerdicts prints one line per worker and returns an error counting
// the workers that are not a match.
func printVerdicts(w io.Writer, vs []verdict) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tINDEX\tREADY\tBEHIND\tDOCUMENTS\tDIGEST\tVERDICT")
	counts := map[string]int{}
	for _, v := range vs {
		counts[v.state]++
		if v.err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s: %v\n", v.worker, v.state, v.err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t%d\t%s\t%s\n", v.worker, v.status.Name, v.status.Ready, v.behind, v.status.Documents, v.status.Digest, v.state)
	}
	_ = tw.Flush()
	var parts []string
	for _, s := range []string{"MISMATCH", "unreachable", "behind"} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) > 0 {
		return fmt.Errorf("documents verify: %s of %d workers", strings.Join(parts, ", "), len(vs))
	}
	return nil
}
