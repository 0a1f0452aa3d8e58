// SPDX-License-Identifier: Apache-2.0

package relay

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// parentEnv makes this test binary play the parent of a broker process
// that dies without closing it (TestBrokerProcessEndsWithItsParent).
const parentEnv = "KRETRIEVE_RELAY_TEST_PARENT"

func TestMain(m *testing.M) {
	ServeBrokerIfAsked()
	if os.Getenv(parentEnv) != "" {
		os.Exit(parent())
	}
	os.Exit(m.Run())
}

// parent starts a broker process, prints "pid N" and waits to be killed
// (bounded by Timeout).
func parent() int {
	p, err := startBrokerProcess(os.Args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("pid %d\n", p.cmd.Process.Pid)
	<-time.After(Timeout)
	return 2
}

// TestBrokerProcessRelays relays records through a broker in a child
// process, reads the child's CPU time and checks that it exits by itself,
// within the bound, once its input is closed.
func TestBrokerProcessRelays(t *testing.T) {
	bp := StartBrokerProcess(t)
	cpu0, err := bp.CPU()
	if err != nil {
		t.Fatal(err)
	}
	r := New(t, bp.Addr, Untraced, 200)
	if err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.Close()
	cpu1, err := bp.CPU()
	if err != nil {
		t.Fatal(err)
	}
	if cpu1 <= cpu0 {
		t.Errorf("broker CPU %v after relaying, %v before: want it to grow", cpu1, cpu0)
	}
	if err := bp.Close(); err != nil {
		t.Fatal(err) // an error also when it had to be killed
	}
	if !bp.cmd.ProcessState.Exited() || bp.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("broker process ended with %v, want exit 0", bp.cmd.ProcessState)
	}
}

// TestBrokerProcessEndsWithItsParent kills the parent of a broker process
// (SIGKILL, nothing closed) and checks that the broker process ends too.
func TestBrokerProcessEndsWithItsParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), parentEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pid "))
	if err != nil || perr != nil {
		t.Fatalf("parent printed %q: %v %v", line, err, perr)
	}
	if !alive(pid) {
		t.Fatalf("broker process %d not running before its parent is killed", pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, func() bool { return !alive(pid) }, "broker process %d still running after its parent was killed", pid)
}

// alive reports whether process pid runs: it exists and is not a zombie
// (an orphan's exit may wait for a reaper that a container lacks).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
