// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestImageForAnotherArchitecture builds the kretrieve image for the
// architecture the engine does not run (arm64 on an amd64 engine, amd64
// otherwise) with `make image IMAGE_ARCH=...`, as a user publishing a
// multi-architecture release would, and checks both the image's platform and
// the binary inside it.
func TestImageForAnotherArchitecture(t *testing.T) {
	engine := strings.TrimSpace(dockerOutput(t, "version", "-f", "{{.Server.Arch}}"))
	arch, machine := "arm64", elf.EM_AARCH64
	if engine == "arm64" {
		arch, machine = "amd64", elf.EM_X86_64
	}
	tag := "kretrieve/kretrieve:cross-" + arch + "-test"
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("make", "--no-print-directory", "image", "IMAGE_ARCH="+arch, "IMAGE="+tag)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image IMAGE_ARCH=%s: %v\n%s", arch, err, out)
	}

	if got := strings.TrimSpace(dockerOutput(t, "image", "inspect", "-f", "{{.Os}}/{{.Architecture}}", tag)); got != "linux/"+arch {
		t.Fatalf("image platform = %q, want linux/%s", got, arch)
	}

	if got := binaryMachine(t, tag); got != machine {
		t.Fatalf("the image's kretrieve is built for %v, want %v (host %s)", got, machine, runtime.GOARCH)
	}

	// The tier's own image, built under another tag, is untouched: its
	// platform and its binary are the engine's still.
	if got := strings.TrimSpace(dockerOutput(t, "image", "inspect", "-f", "{{.Architecture}}", kretrieveImage)); got != engine {
		t.Fatalf("%s is %s after the cross build, want %s", kretrieveImage, got, engine)
	}
	if got := binaryMachine(t, kretrieveImage); got == machine {
		t.Fatalf("%s holds a %v binary after the cross build", kretrieveImage, got)
	}
}

// binaryMachine copies /usr/local/bin/kretrieve out of a created (never started)
// container of img and returns the machine its ELF header names.
func binaryMachine(t *testing.T, img string) elf.Machine {
	t.Helper()
	id := strings.TrimSpace(dockerOutput(t, "create", img))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	bin := filepath.Join(t.TempDir(), "kretrieve")
	dockerOutput(t, "cp", id+":/usr/local/bin/kretrieve", bin)
	if st, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	} else if st.Size() < 1<<20 {
		t.Fatalf("%s: /usr/local/bin/kretrieve has %d bytes, not a kretrieve binary", img, st.Size())
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: /usr/local/bin/kretrieve is not an ELF binary: %v", img, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 {
		t.Fatalf("%s: /usr/local/bin/kretrieve is %v", img, f.Class)
	}
	return f.Machine
}

// dockerOutput runs the docker CLI and returns its standard output.
func dockerOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("docker %s: %v %s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}
