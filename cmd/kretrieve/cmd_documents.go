// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/docfeed"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/pipeline"
)

// documentsCommand is "kretrieve documents" and its verify subcommand.
func (e *cli) documentsCommand() *cobra.Command {
	docs := &cobra.Command{
		Use:     "documents verify",
		GroupID: "tools",
		Short:   "Check that workers' documents match the documents topic",
		Long: `Operate on the documents topic (--topic-documents) that every worker's index
follows. verify checks that workers' indexes hold the topic's documents.`,
		Example: `  kretrieve documents verify --worker http://10.0.0.5:8081 --worker http://10.0.0.6:8081`,
		Args:    cobra.ArbitraryArgs,
		RunE:    e.subcommandOnly("documents", "verify"),
	}
	docs.AddCommand(e.command(&cobra.Command{
		Use:   "verify --worker URL...",
		Short: "Compare workers' documents (GET URL/v1/index) with the documents topic's final state",
		Long: `Compare each worker's documents with the documents topic's final state. Give
each worker's --health-listen address as --worker URL: verify reads its
GET URL/v1/index (position, document count, digest), then reads the topic from
its log start to its end offsets at that moment, as a worker applies it (a
record that is not a document is skipped), into the digest of its documents.

It prints one line per worker: its index name, whether it is ready, its
offsets against the topic's end offsets, how many records it is behind, its
document count and digest, and a verdict:

  match              at the end offsets, and the digests are equal
  behind N records   below the end offsets: the digests cannot be compared yet
  MISMATCH           at the end offsets (or past them), and the digests differ
  unreachable        no /v1/index answer

--catch-up-timeout DURATION polls, re-reading the topic when it changes, until
no worker is behind or DURATION has passed. The command exits non-zero unless
every worker matches, and says how many are not a match, by verdict.`,
		Example: `  kretrieve documents verify --worker http://10.0.0.5:8081 --worker http://10.0.0.6:8081
  kretrieve documents verify --worker http://127.0.0.1:8081 --catch-up-timeout 2m
  KRETRIEVE_WORKER=http://a:8081,http://b:8081 kretrieve documents verify --json`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c verifyConfig) error { return runDocumentsVerify(ctx, c, e.stdout, e.stderr) })))
	return docs
}

// verifyConfig configures documents verify.
type verifyConfig struct {
	commonConfig
	workers []string
	catchUp time.Duration
	json    bool
}

// flags declares the flags of a verifyConfig on s and returns the check of
// their values, run once they are parsed.
func (c *verifyConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "documents", kafkaclient.DefaultBrokers)
	s.list(&c.workers, "worker", "worker to check: the URL of its --health-listen address, e.g. http://10.0.0.5:8081 (repeat the flag for more; the variable: comma-separated URLs)")
	s.duration(&c.catchUp, "catch-up-timeout", 0, "how long to poll while a worker is behind the topic, for it to catch up (0: report it as behind at once)")
	s.boolean(&c.json, "json", false, "print JSON lines")
	return func(args []string) error {
		errs := []error{c.validate(), validateBrokers(c.brokers)}
		if len(c.workers) == 0 {
			errs = append(errs, errors.New("worker: at least one --worker URL is required"))
		}
		for i, w := range c.workers {
			u, err := workerURL(w)
			if err != nil {
				errs = append(errs, err)
			}
			c.workers[i] = u
		}
		if c.catchUp < 0 {
			errs = append(errs, errors.New("catch-up-timeout: must not be negative"))
		}
		return errors.Join(errs...)
	}
}

// workerURL checks a --worker value and returns it without a trailing
// slash.
func workerURL(w string) (string, error) {
	u, err := url.Parse(w)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return w, fmt.Errorf("worker %.80q: not an http:// or https:// URL of a worker's --health-listen address, such as http://10.0.0.5:8081", w)
	}
	return strings.TrimSuffix(w, "/"), nil
}

// Verdicts of documents verify, as --json prints them.
const (
	verdictMatch       = "match"
	verdictBehind      = "behind"
	verdictMismatch    = "mismatch"
	verdictUnreachable = "unreachable"
)

// workerCheck is what documents verify found about one worker, one line
// of its output (--json: as is).
type workerCheck struct {
	Worker      string          `json:"worker"`
	Name        string          `json:"name,omitempty"`
	Topic       string          `json:"topic"`
	Ready       bool            `json:"ready"`
	Offsets     map[int32]int64 `json:"offsets"`
	Ends        map[int32]int64 `json:"ends"`
	Behind      int64           `json:"behind"`
	Documents   int             `json:"documents"`
	Digest      string          `json:"digest"`
	TopicDigest string          `json:"topic_digest"`
	Verdict     string          `json:"verdict"`
	// Reason says why a worker is unreachable or does not match.
	Reason string `json:"reason,omitempty"`
}

// verifyPollInterval is how often documents verify --catch-up-timeout
// checks again.
const verifyPollInterval = 500 * time.Millisecond

// statusTimeout bounds one GET /v1/index.
const statusTimeout = 5 * time.Second

// maxStatusBytes bounds the /v1/index answer read.
const maxStatusBytes = 1 << 20

// runDocumentsVerify compares the workers' documents with the topic's.
func runDocumentsVerify(ctx context.Context, cfg verifyConfig, stdout, stderr io.Writer) error {
	return command{role: "documents", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		v := verifier{opts: kafkaOptions(p, nil), topic: p.Topology().Documents, workers: cfg.workers,
			client: &http.Client{Timeout: statusTimeout}}
		checks, state, err := v.poll(ctx, cfg.catchUp)
		if err != nil {
			return err
		}
		if cfg.json {
			enc := json.NewEncoder(stdout)
			enc.SetEscapeHTML(false)
			for _, c := range checks {
				if err := enc.Encode(c); err != nil {
					return err
				}
			}
		} else if err := printChecks(stdout, state, checks); err != nil {
			return err
		}
		if state.refused > 0 {
			comp.logger.WarnContext(ctx, "records that are not documents skipped, as workers skip them", "topic", state.topic, "records", state.refused)
		}
		return verifyErr(checks)
	})
}

// verifier checks workers against the documents topic.
type verifier struct {
	opts    []kgo.Opt
	topic   string
	workers []string
	client  *http.Client
}

// poll checks every worker, again while one is behind until catchUp has
// passed, and returns the last checks and topic state.
func (v *verifier) poll(ctx context.Context, catchUp time.Duration) ([]workerCheck, *documentsState, error) {
	deadline := time.Now().Add(catchUp)
	var state *documentsState
	for {
		// The workers first, then the topic: a worker can then only be
		// behind the end offsets read, never ahead of them, unless the
		// topic was recreated.
		statuses, errs := v.fetch(ctx)
		var err error
		if state, err = v.refresh(ctx, state); err != nil {
			return nil, nil, fmt.Errorf("read the documents topic %s: %w", v.topic, err)
		}
		checks := make([]workerCheck, len(v.workers))
		for i, w := range v.workers {
			checks[i] = state.check(w, statuses[i], errs[i])
		}
		behind := slices.ContainsFunc(checks, func(c workerCheck) bool { return c.Verdict == verdictBehind })
		if !behind || !time.Now().Before(deadline) {
			return checks, state, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(verifyPollInterval):
		}
	}
}

// refresh returns the topic's state now: state itself when the topic's
// extents have not changed since it was read.
func (v *verifier) refresh(ctx context.Context, state *documentsState) (*documentsState, error) {
	if state != nil {
		starts, ends, err := topicExtents(ctx, v.opts, v.topic)
		if err != nil {
			return nil, err
		}
		if maps.Equal(starts, state.starts) && maps.Equal(ends, state.ends) {
			return state, nil
		}
	}
	return readDocumentsState(ctx, v.opts, v.topic, false)
}

// fetch gets every worker's status at once.
func (v *verifier) fetch(ctx context.Context) ([]docfeed.Status, []error) {
	statuses, errs := make([]docfeed.Status, len(v.workers)), make([]error, len(v.workers))
	var wg sync.WaitGroup
	for i, w := range v.workers {
		wg.Go(func() { statuses[i], errs[i] = fetchStatus(ctx, v.client, w) })
	}
	wg.Wait()
	return statuses, errs
}

// fetchStatus gets a worker's GET /v1/index.
func fetchStatus(ctx context.Context, client *http.Client, worker string) (docfeed.Status, error) {
	var st docfeed.Status
	u := worker + "/v1/index"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return st, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxStatusBytes)).Decode(&st); err != nil {
		return st, fmt.Errorf("GET %s: not an index status: %w", u, err)
	}
	if st.Digest == "" || st.Offsets == nil {
		return st, fmt.Errorf("GET %s: not an index status: no digest or offsets", u)
	}
	return st, nil
}

// check judges worker's status st (or the error fetching it) against the
// topic's state.
func (s *documentsState) check(worker string, st docfeed.Status, err error) workerCheck {
	c := workerCheck{Worker: worker, Topic: s.topic, Ends: s.ends, TopicDigest: s.digest().String()}
	if err != nil {
		c.Verdict, c.Reason = verdictUnreachable, err.Error()
		return c
	}
	c.Name, c.Ready, c.Offsets, c.Documents, c.Digest = st.Name, st.Ready, st.Offsets, st.Documents, st.Digest
	if st.Topic != s.topic {
		c.Verdict, c.Reason = verdictMismatch, fmt.Sprintf("the worker follows %s, not %s", st.Topic, s.topic)
		return c
	}
	for _, p := range slices.Sorted(maps.Keys(st.Offsets)) {
		if end, ok := s.ends[p]; !ok || st.Offsets[p] > end {
			c.Verdict, c.Reason = verdictMismatch, fmt.Sprintf("partition %d: applied up to %d, past the topic's end %d (was the topic recreated?)", p, st.Offsets[p], end)
			return c
		}
	}
	for p, end := range s.ends {
		o, ok := st.Offsets[p]
		if !ok {
			o = s.starts[p] // nothing before the log start to apply
		}
		c.Behind += max(end-o, 0)
	}
	switch {
	case c.Behind > 0:
		c.Verdict = verdictBehind
	case st.Digest == c.TopicDigest:
		c.Verdict = verdictMatch
	default:
		c.Verdict, c.Reason = verdictMismatch, "at the topic's end offsets, the digests differ"
	}
	return c
}

// verdictText is a check's verdict as the table prints it.
func (c workerCheck) verdictText() string {
	switch c.Verdict {
	case verdictBehind:
		return fmt.Sprintf("behind %d records", c.Behind)
	case verdictMismatch:
		return "MISMATCH: " + c.Reason
	case verdictUnreachable:
		return "unreachable: " + c.Reason
	}
	return c.Verdict
}

// printChecks prints the topic's line, then a table row per worker.
func printChecks(w io.Writer, state *documentsState, checks []workerCheck) error {
	fmt.Fprintf(w, "topic %s: end offsets %s, %d documents, digest %s\n",
		state.topic, offsetsText(state.ends, nil), len(state.versions), state.digest())
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tINDEX\tREADY\tOFFSETS/ENDS\tBEHIND\tDOCUMENTS\tDIGEST\tVERDICT")
	for _, c := range checks {
		if c.Verdict == verdictUnreachable {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s\n", c.Worker, c.verdictText())
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%d\t%d\t%s\t%s\n", c.Worker, cmp.Or(c.Name, "-"), c.Ready,
			offsetsText(c.Offsets, c.Ends), c.Behind, c.Documents, c.Digest, c.verdictText())
	}
	return tw.Flush()
}

// offsetsText is "0:120,1:98" or, with ends, "0:120/120,1:98/100", by
// partition ("-" for none).
func offsetsText(offsets, ends map[int32]int64) string {
	ps := slices.Collect(maps.Keys(offsets))
	for p := range ends {
		if _, ok := offsets[p]; !ok {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	var parts []string
	for _, p := range ps {
		o, ok := offsets[p]
		s := strconv.Itoa(int(p)) + ":"
		if ok {
			s += strconv.FormatInt(o, 10)
		} else {
			s += "-"
		}
		if ends != nil {
			s += "/" + strconv.FormatInt(ends[p], 10)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// verifyErr is the command's error: how many workers are not a match, by
// verdict; nil when every worker matches.
func verifyErr(checks []workerCheck) error {
	n := map[string]int{}
	for _, c := range checks {
		n[c.Verdict]++
	}
	var parts []string
	for _, v := range []struct{ verdict, text string }{{verdictMismatch, "MISMATCH"}, {verdictUnreachable, "unreachable"}, {verdictBehind, "behind"}} {
		if n[v.verdict] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v.verdict], v.text))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("documents verify: %s of %d workers", strings.Join(parts, ", "), len(checks))
}
