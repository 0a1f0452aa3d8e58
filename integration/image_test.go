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

	// The binary inside: copied out of a created (never started) container.
	id := strings.TrimSpace(dockerOutput(t, "create", tag))
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	bin := filepath.Join(t.TempDir(), "kretrieve")
	dockerOutput(t, "cp", id+":/kretrieve", bin)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the image's /kretrieve is not an ELF binary: %v", err)
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 {
		t.Fatalf("the image's /kretrieve is %v %v, want %v (host %s)", f.Class, f.Machine, machine, runtime.GOARCH)
	}
	if st, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	} else if st.Size() < 1<<20 {
		t.Fatalf("the image's /kretrieve has %d bytes, not a kretrieve binary", st.Size())
	}

	// The tier's own image, built under another tag, is untouched.
	if got := strings.TrimSpace(dockerOutput(t, "image", "inspect", "-f", "{{.Architecture}}", kretrieveImage)); got != engine {
		t.Fatalf("%s is %s after the cross build, want %s", kretrieveImage, got, engine)
	}
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
