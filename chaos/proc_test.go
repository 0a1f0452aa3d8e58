// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one kretrieve command, started again after every stop: each
// incarnation's stderr goes to a log file of its own.
type proc struct {
	name string
	args []string
	env  []string
	dir  string // log directory

	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan error
	runs  int      // incarnations started
	stops []string // how each ended: "SIGKILL", "SIGTERM", "exit"
	logs  []string // log file of each incarnation
}

// start starts a new incarnation.
func (p *proc) start(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	log := filepath.Join(p.dir, fmt.Sprintf("%s.%d.log", p.name, p.runs))
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, p.args...)
	cmd.Env = append(append(os.Environ(), quietTelemetry...), p.env...)
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan error, 1)
	go func() { err := cmd.Wait(); f.Close(); done <- err }()
	p.cmd, p.done = cmd, done
	p.runs++
	p.logs = append(p.logs, log)
}

// stop sends sig to the running incarnation and waits up to timeout for it
// to exit; it returns how long the exit took and the process's error.
func (p *proc) stop(t testing.TB, sig syscall.Signal, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	began := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.name, err)
	}
	select {
	case err := <-done:
		done <- err
		p.mu.Lock()
		p.stops = append(p.stops, sig.String())
		p.mu.Unlock()
		return time.Since(began), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		t.Fatalf("%s still running %v after %v", p.name, timeout, sig)
		return 0, nil
	}
}

// signal sends sig to the running incarnation without waiting (SIGSTOP,
// SIGCONT).
func (p *proc) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	return cmd.Process.Signal(sig)
}

// exited waits up to timeout for the running incarnation to exit by itself.
func (p *proc) exited(timeout time.Duration) (error, bool) {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	select {
	case err := <-done:
		done <- err
		return err, true
	case <-time.After(timeout):
		return nil, false
	}
}

// incarnations is how many incarnations were started.
func (p *proc) incarnations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

// kill ends the running incarnation, if any, for the test's cleanup.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	err := <-done
	done <- err
}

// grep returns the lines of every incarnation's log that contain any of
// the texts, prefixed with the log's name.
func (p *proc) grep(texts ...string) []string {
	p.mu.Lock()
	logs := append([]string(nil), p.logs...)
	p.mu.Unlock()
	var found []string
	for _, log := range logs {
		b, _ := os.ReadFile(log)
		for line := range strings.SplitSeq(string(b), "\n") {
			for _, s := range texts {
				if strings.Contains(line, s) {
					found = append(found, filepath.Base(log)+": "+line)
					break
				}
			}
		}
	}
	return found
}

// quietTelemetry turns every OTLP exporter off: the chaos test counts
// records, not spans, and no collector runs.
var quietTelemetry = []string{
	"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none",
}

// pause waits d, the fault schedule's spacing (not a guess at how long an
// event takes), or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
