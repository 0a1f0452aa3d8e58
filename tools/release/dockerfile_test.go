// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDockerfileToLayer: a Dockerfile's COPY steps become the layer's
// entries with docker build's rules (a directory's contents into the
// destination, parents added, --chown kept), its settings the config.
func TestDockerfileToLayer(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"Dockerfile": "# a comment\nFROM scratch\nCOPY ca.crt /etc/ssl/certs/ca-certificates.crt\n" +
			"COPY --chown=65532:65532 corpus /var/lib/kretrieve/\nCOPY kretrieve /usr/local/bin/\n" +
			"ENV KRETRIEVE_INDEX=/var/lib/kretrieve \\\n  PATH=/opt:$PATH\nUSER 65532:65532\nENTRYPOINT [\"kretrieve\"]\nLABEL a=\"b c\"\n",
		"ca.crt": "x", "kretrieve": "bin", "corpus/docs.jsonl": "{}",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := parseDockerfile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := r.layerEntries(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.name)
		if f.name == "var/lib/kretrieve/docs.jsonl" && (f.uid != 65532 || f.gid != 65532) {
			t.Errorf("%s owned by %d:%d, want --chown's 65532:65532", f.name, f.uid, f.gid)
		}
	}
	want := []string{"etc/", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "usr/", "usr/local/", "usr/local/bin/",
		"usr/local/bin/kretrieve", "var/", "var/lib/", "var/lib/kretrieve/", "var/lib/kretrieve/docs.jsonl"}
	if !slices.Equal(names, want) {
		t.Errorf("layer:\n%v\nwant\n%v", names, want)
	}
	c := r.config
	wantEnv := []string{"PATH=/opt:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "KRETRIEVE_INDEX=/var/lib/kretrieve"}
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"kretrieve"}) || c.Labels["a"] != "b c" || !slices.Equal(c.Env, wantEnv) {
		t.Errorf("config %+v", c)
	}
}

// TestDockerfileRefusesWhatItCannotBuild: an instruction the release
// builder does not implement, or a base image, is an error, never a
// different image.
func TestDockerfileRefusesWhatItCannotBuild(t *testing.T) {
	for _, df := range []string{"FROM alpine\n", "FROM scratch\nRUN true\n", "COPY a /a\n", "FROM scratch\nENTRYPOINT /kretrieve\n"} {
		p := filepath.Join(t.TempDir(), "Dockerfile")
		if err := os.WriteFile(p, []byte(df), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := parseDockerfile(p); err == nil || !strings.Contains(err.Error(), "Dockerfile") {
			t.Errorf("%q: err %v, want an error naming the file", df, err)
		}
	}
}
