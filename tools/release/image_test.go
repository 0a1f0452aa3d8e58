// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// checkImage reads the release's OCI layout tarball with
// go-containerregistry: one index tagged with the version, holding
// linux/amd64 and linux/arm64 images with the release's labels, whose
// entrypoint is the archives' linux binary, byte for byte. With a Docker
// engine, it loads the host's image and runs `kretrieve version` in it.
func checkImage(t *testing.T, dist string) {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(filepath.Join(dist, "kretrieve_"+testVersion+"_oci.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := untar(f, dir); err != nil {
		t.Fatal(err)
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil || len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != testVersion {
		t.Fatalf("index.json: %+v %v, want one image index named %s", tm, err, testVersion)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image index %s", tm.Manifests[0].Digest)
	platforms := map[string]bool{}
	for _, d := range im.Manifests {
		platforms[d.Platform.String()] = true
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkPlatformImage(t, dist, img, *d.Platform)
		if d.Platform.Architecture == hostArch(t) {
			runImage(t, img)
		}
	}
	if len(platforms) != 2 || !platforms["linux/amd64"] || !platforms["linux/arm64/v8"] {
		t.Errorf("image platforms %v, want linux/amd64 and linux/arm64/v8", platforms)
	}
	if im.Annotations["org.opencontainers.image.version"] != testVersion {
		t.Errorf("image index annotations %v", im.Annotations)
	}
}

// checkPlatformImage: img's labels name the release, and its entrypoint
// is the linux archive's binary for p.
func checkPlatformImage(t *testing.T, dist string, img v1.Image, p v1.Platform) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
	if err != nil {
		t.Fatal(err)
	}
	secs, _ := strconv.ParseInt(strings.TrimSpace(string(epoch)), 10, 64)
	created := time.Unix(secs, 0).UTC().Format(time.RFC3339)
	want := map[string]string{
		"org.opencontainers.image.source":   Source,
		"org.opencontainers.image.version":  testVersion,
		"org.opencontainers.image.revision": strings.TrimSpace(string(head)),
		"org.opencontainers.image.created":  created,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    "kretrieve",
	}
	for k, v := range want {
		if got := cf.Config.Labels[k]; got != v {
			t.Errorf("%s: label %s = %q, want %q", p, k, got, v)
		}
	}
	if cf.OS != "linux" || cf.Architecture != p.Architecture || cf.Created.UTC().Format(time.RFC3339) != created || len(cf.Config.Entrypoint) == 0 {
		t.Fatalf("%s: config %s/%s created %s entrypoint %v", p, cf.OS, cf.Architecture, cf.Created, cf.Config.Entrypoint)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: %d layers, %v", p, len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	bin, err := fileInTar(rc, entrypointPath(cf.Config))
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if !bytes.Equal(bin, archivedBinary(t, dist, "linux", p.Architecture)) {
		t.Errorf("%s: the image's %s is not the archive's binary", p, cf.Config.Entrypoint[0])
	}
}

// entrypointPath is the file the entrypoint runs: itself when it is a
// path, else the first PATH directory's (which the layer must hold).
func entrypointPath(c v1.Config) string {
	if strings.Contains(c.Entrypoint[0], "/") {
		return c.Entrypoint[0]
	}
	for _, kv := range c.Env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range strings.Split(p, ":") {
				if d == "/usr/local/bin" || strings.Contains(d, "kretrieve") {
					return path.Join(d, c.Entrypoint[0])
				}
			}
		}
	}
	return "/usr/local/bin/" + c.Entrypoint[0]
}

// hostArch is the Docker engine's architecture, "" without an engine.
func hostArch(t *testing.T) string {
	out, err := exec.Command("docker", "version", "-f", "{{.Server.Arch}}").Output()
	if err != nil {
		if os.Getenv("RELEASE_CHECK_REQUIRE_DOCKER") == "1" {
			t.Fatalf("RELEASE_CHECK_REQUIRE_DOCKER=1 and no Docker engine: %v", err)
		}
		t.Logf("no Docker engine (%v): the image is checked with go-containerregistry only, not run", err)
		return ""
	}
	return strings.TrimSpace(string(out))
}

// runImage loads img into the Docker engine under a tag of this test's
// own (docker save's format: Docker 20.10 cannot load an OCI layout) and
// runs `kretrieve version` in it.
func runImage(t *testing.T, img v1.Image) {
	t.Helper()
	tag, err := name.NewTag("kretrieve-releasetest:" + strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(tarPath, tag, img); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("docker", "load", "-i", tarPath).CombinedOutput(); err != nil {
		t.Fatalf("docker load: %v\n%s", err, out)
	}
	defer exec.Command("docker", "rmi", "-f", tag.String()).Run()
	out, err := exec.Command("docker", "run", "--rm", tag.String(), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "kretrieve "+testVersion+"\n") {
		t.Fatalf("docker run %s version: %v\n%s", tag, err, out)
	}
	t.Logf("docker run %s version:\n%s", tag, out)
}
