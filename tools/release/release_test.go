// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testVersion is the version the test's release builds carry.
const testVersion = "v0.1.0-releasetest"

// buildRelease runs release.sh into dist and returns its SHA256SUMS.
func buildRelease(t *testing.T, dist string) []byte {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("./release.sh")
	cmd.Env = append(os.Environ(), "VERSION="+testVersion, "DIST="+dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	t.Logf("release.sh into %s took %s", dist, time.Since(start).Round(time.Second))
	sums, err := os.ReadFile(filepath.Join(dist, sumsFile))
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// TestReleaseIsReproducible: two release builds of the same commit are
// byte for byte the same (their SHA256SUMS, which cover every archive,
// SBOM and the image layout), SHA256SUMS is right, the host's binary
// names the release, and the image holds both platforms, the release's
// labels and the very binaries of the archives.
func TestReleaseIsReproducible(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	sumsA, sumsB := buildRelease(t, a), buildRelease(t, b)
	if !bytes.Equal(sumsA, sumsB) {
		t.Fatalf("two builds differ:\n%s\n%s", sumsA, sumsB)
	}
	t.Logf("SHA256SUMS:\n%s", sumsA)
	sums := checkSums(t, a, sumsA)
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64", "windows_arm64"} {
		ext := ".tar.gz"
		if strings.HasPrefix(p, "windows") {
			ext = ".zip"
		}
		for _, name := range []string{"kretrieve_" + testVersion + "_" + p + ext, "kretrieve_" + testVersion + "_" + p + ".cdx.json"} {
			if _, ok := sums[name]; !ok {
				t.Errorf("SHA256SUMS lacks %s", name)
			}
		}
	}
	checkHostVersion(t, a)
	checkQuickStart(t, a)
	checkSBOM(t, filepath.Join(a, "kretrieve_"+testVersion+"_linux_amd64.cdx.json"))
	checkImage(t, a)
}

// checkSums verifies every line of SHA256SUMS against the file in dist and
// that it names every file; it returns the sums by name.
func checkSums(t *testing.T, dist string, sums []byte) map[string]string {
	t.Helper()
	byName := map[string]string{}
	for line := range strings.Lines(string(sums)) {
		sum, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		if got := fileSHA256(t, filepath.Join(dist, name)); got != sum {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, got, sum)
		}
		byName[name] = sum
	}
	des, _ := os.ReadDir(dist)
	if len(des) != len(byName)+1 {
		t.Errorf("dist has %d files, SHA256SUMS names %d", len(des), len(byName))
	}
	return byName
}

// fileSHA256 is the hex SHA-256 of the file at p.
func fileSHA256(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// archivedBinary returns the kretrieve binary of the platform's archive.
func archivedBinary(t *testing.T, dist, goos, goarch string) []byte {
	t.Helper()
	name := "kretrieve_" + testVersion + "_" + goos + "_" + goarch
	if goos == "windows" {
		zr, err := zip.OpenReader(filepath.Join(dist, name+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		f, err := zr.Open(name + "/kretrieve.exe")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	zr := openTarGz(t, filepath.Join(dist, name+".tar.gz"))
	data, err := fileInTar(zr, name+"/kretrieve")
	if err != nil {
		t.Fatalf("%s.tar.gz: %v", name, err)
	}
	return data
}

// fileInTar returns the file called name in the tar r.
func fileInTar(r io.Reader, name string) ([]byte, error) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, errors.Join(errors.New(name+": not in the archive"), err)
		}
		if path.Clean("/"+h.Name) == path.Clean("/"+name) {
			return io.ReadAll(tr)
		}
	}
}

// checkHostVersion runs the host platform's archived binary: version
// names the release and its commit.
func checkHostVersion(t *testing.T, dist string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kretrieve")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if err := os.WriteFile(bin, archivedBinary(t, dist, runtime.GOOS, runtime.GOARCH), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("kretrieve version: %v", err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Version, Revision, Platform string }
	if err := json.Unmarshal(out, &v); err != nil || v.Version != testVersion || v.Revision != strings.TrimSpace(string(head)) || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("kretrieve version --json: %s (%v), want version %s revision %s", out, err, testVersion, head)
	}
	t.Logf("kretrieve version --json: %s", bytes.TrimSpace(out))
}

// checkQuickStart runs the README's Install quick start with nothing but
// the host platform's archive: no Go toolchain on PATH, no GOROOT, no
// checkout. The archive's demo corpus is indexed, and `kretrieve run`
// (embedded broker, workers, requests) answers every request.
func checkQuickStart(t *testing.T, dist string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		return // the archive is a zip; the quick start is the same
	}
	dir := t.TempDir()
	name := "kretrieve_" + testVersion + "_" + runtime.GOOS + "_" + runtime.GOARCH
	zr := openTarGz(t, filepath.Join(dist, name+".tar.gz"))
	if err := untar(zr, dir); err != nil {
		t.Fatal(err)
	}
	unpacked := filepath.Join(dir, name)
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(unpacked, "kretrieve"), args...)
		cmd.Dir = home
		cmd.Env = []string{"PATH=" + unpacked, "HOME=" + home, "TMPDIR=" + home}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kretrieve %s (no Go, only the archive): %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("index", "--index", filepath.Join(home, "idx"), "--jsonl", filepath.Join(unpacked, "go-stdlib.jsonl"))
	out := run("run", "--index", filepath.Join(home, "idx"), "--requests", "20")
	if !regexp.MustCompile(`sent 20\s+completed 20\s+failed 0`).MatchString(out) {
		t.Errorf("kretrieve run from the archive alone did not complete its 20 requests:\n%s", out)
	}
	t.Logf("the quick start from the archive alone: kretrieve run:\n%s", out)
}

// checkSBOM: the SBOM is CycloneDX JSON naming kretrieve at the release
// version, with its dependencies (franz-go among them).
func checkSBOM(t *testing.T, p string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version string }
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatal(err)
	}
	franz := false
	for _, c := range bom.Components {
		franz = franz || c.Name == "github.com/twmb/franz-go"
	}
	if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Name != "github.com/kretrieve/kretrieve" || bom.Metadata.Component.Version != testVersion || !franz {
		t.Fatalf("SBOM %s: format %q, component %+v, %d components (franz-go: %v)", p, bom.BOMFormat, bom.Metadata.Component, len(bom.Components), franz)
	}
}

// untar unpacks the tar r (regular files and directories only) into dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Name)))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, data, h.FileInfo().Mode().Perm()); err != nil {
			return err
		}
	}
}

// openTarGz opens the gzip stream of a .tar.gz, closed at the test's end.
func openTarGz(t *testing.T, p string) *gzip.Reader {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return zr
}
