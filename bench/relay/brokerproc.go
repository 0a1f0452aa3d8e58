// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
)

// BrokerEnv, set to "1" in a test binary's environment, makes
// ServeBrokerIfAsked serve the relay's broker in that process instead of
// running the tests: StartBrokerProcess re-executes the running test binary
// (os.Args[0]) so.
const BrokerEnv = "KRETRIEVE_RELAY_BROKER"

// BrokerMaxLifetime bounds how long a broker process lives, whatever its
// parent does.
const BrokerMaxLifetime = 30 * time.Minute

// brokerStopTimeout bounds how long Close waits for the broker process to
// exit after closing its standard input, before it kills it.
const brokerStopTimeout = 10 * time.Second

// ServeBrokerIfAsked returns at once unless BrokerEnv is set. When it is,
// it serves a broker as brokertest.NewBroker configures one (127.0.0.1, a
// free port, Partitions partitions a topic, no retention), prints
// "addr HOST:PORT" on standard output, answers each "cpu" line read from
// standard input with "cpu NANOSECONDS" (its own user+system CPU time,
// getrusage RUSAGE_SELF), and exits once standard input ends: when the
// parent closes it or the parent itself ends, and in any case after
// BrokerMaxLifetime. It never returns then. Call it first in TestMain.
func ServeBrokerIfAsked() {
	if os.Getenv(BrokerEnv) == "" {
		return
	}
	time.AfterFunc(BrokerMaxLifetime, func() {
		fmt.Fprintln(os.Stderr, "relay broker: BrokerMaxLifetime reached, exiting")
		os.Exit(3)
	})
	if err := serveBroker(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "relay broker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveBroker serves a broker until in ends, following the protocol of
// ServeBrokerIfAsked.
func serveBroker(in io.Reader, out io.Writer) error {
	cfg := brokertest.Config(Partitions)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := broker.Start(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	if _, err := fmt.Fprintf(out, "addr %s\n", b.Addr()); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "cpu" {
			return fmt.Errorf("unknown request %q", sc.Text())
		}
		cpu, err := ProcessCPU()
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "cpu %d\n", cpu.Nanoseconds()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// ProcessCPU returns the user+system CPU time of this process alone (its
// threads, not its children), from getrusage(RUSAGE_SELF).
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// BrokerProcess is a relay broker running in a child process (see
// ServeBrokerIfAsked).
type BrokerProcess struct {
	// Addr is the broker's address.
	Addr string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Reader
	stderr *syncbuf.Buffer
	exited chan struct{} // closed once the process has been waited for
	err    error         // Wait's error, set before exited is closed
	once   sync.Once
}

// StartBrokerProcess re-executes the running test binary as a broker
// process (its TestMain must call ServeBrokerIfAsked first) and waits for
// its address. tb's cleanup closes it.
func StartBrokerProcess(tb testing.TB) *BrokerProcess {
	tb.Helper()
	p, err := startBrokerProcess(os.Args[0])
	if err != nil {
		tb.Fatalf("broker process: %v", err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Errorf("broker process: %v", err)
		}
	})
	return p
}

func startBrokerProcess(binary string) (*BrokerProcess, error) {
	p := &BrokerProcess{stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(binary, "-test.run=^$")
	p.cmd.Env = append(os.Environ(), BrokerEnv+"=1")
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	p.lines = bufio.NewReader(stdout)
	addr := make(chan string, 1)
	go func() {
		line, _ := p.lines.ReadString('\n')
		addr <- line
		// Wait closes stdout: reading first, as exec.Cmd requires.
	}()
	select {
	case line := <-addr:
		a, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
		if !ok {
			p.kill()
			return nil, fmt.Errorf("no address from the broker process (%q): %s", line, p.stderr.String())
		}
		p.Addr = a
	case <-time.After(Timeout):
		p.kill()
		return nil, fmt.Errorf("no address from the broker process within %v: %s", Timeout, p.stderr.String())
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// CPU returns the broker process's own user+system CPU time so far.
func (p *BrokerProcess) CPU() (time.Duration, error) {
	if _, err := io.WriteString(p.stdin, "cpu\n"); err != nil {
		return 0, fmt.Errorf("ask the broker process its CPU time: %w", err)
	}
	line, err := p.lines.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("read the broker process's CPU time: %w: %s", err, p.stderr.String())
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "cpu ")
	ns, perr := strconv.ParseInt(v, 10, 64)
	if !ok || perr != nil {
		return 0, fmt.Errorf("broker process answered %q to cpu", line)
	}
	return time.Duration(ns), nil
}

// Close closes the broker process's standard input, which makes it stop,
// and waits for it to exit, killing it after brokerStopTimeout. It returns
// the process's error, if it failed; safe to call more than once.
func (p *BrokerProcess) Close() error {
	var err error
	p.once.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.exited:
			if p.err != nil {
				err = fmt.Errorf("%w: %s", p.err, p.stderr.String())
			}
		case <-time.After(brokerStopTimeout):
			_ = p.cmd.Process.Kill()
			<-p.exited
			err = fmt.Errorf("still running %v after its input closed, killed: %s", brokerStopTimeout, p.stderr.String())
		}
	})
	return err
}

// kill ends a process that failed to start properly.
func (p *BrokerProcess) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}
