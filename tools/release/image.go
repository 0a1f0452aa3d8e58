// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// imageMeta is what the image's labels and annotations say of the release.
type imageMeta struct {
	Version, Revision string
	Created           time.Time
}

// Source is the repository the image's org.opencontainers.image.source
// names.
const Source = "https://github.com/kretrieve/kretrieve"

// annotations are the OCI annotations (and image labels) of a release
// image (https://specs.opencontainers.org/image-spec/annotations/).
func (m imageMeta) annotations() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "kretrieve",
		"org.opencontainers.image.description": "A Kafka-driven retrieval pipeline: gateway, retrieval and enrichment stages, one static binary",
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     m.Version,
		"org.opencontainers.image.revision":    m.Revision,
		"org.opencontainers.image.created":     m.Created.Format(time.RFC3339),
	}
}

// writeImage builds one image per platform=context argument (linux/arm64=
// DIR, DIR holding the Dockerfile and the files it copies), puts them in
// one OCI image index, and writes it as an OCI image layout tarball to
// out. It returns the index's digest.
func writeImage(out string, platformContexts []string, m imageMeta) (v1.Hash, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pc := range platformContexts {
		plat, dir, ok := strings.Cut(pc, "=")
		p, err := v1.ParsePlatform(plat)
		if !ok || err != nil || p.OS != "linux" {
			return v1.Hash{}, fmt.Errorf("%q: want linux/ARCH=CONTEXT_DIR", pc)
		}
		if p.Architecture == "arm64" && p.Variant == "" {
			p.Variant = "v8"
		}
		img, err := buildImage(dir, *p, m)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("%s: %w", plat, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	idx = mutate.Annotations(idx, m.annotations()).(v1.ImageIndex)
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".oci-layout-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(tmp)
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	ref := map[string]string{
		"org.opencontainers.image.ref.name": m.Version,
		"io.containerd.image.name":          "docker.io/kretrieve/kretrieve:" + m.Version,
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(ref)); err != nil {
		return v1.Hash{}, err
	}
	entries, err := walk(tmp, "")
	if err != nil {
		return v1.Hash{}, err
	}
	for i := range entries {
		if entries[i].src != "" {
			entries[i].mode = 0o644 // blobs are data, whatever mode layout.Write gave them
		}
	}
	return digest, writeFile(out, func(w io.Writer) error { return writeTar(w, entries, m.Created) })
}

// buildImage is the image the Dockerfile in dir describes for platform p:
// one layer with the files its COPY steps copy, its configuration, the
// release's labels, every time m.Created.
func buildImage(dir string, p v1.Platform, m imageMeta) (v1.Image, error) {
	r, err := parseDockerfile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return nil, err
	}
	var layerTar bytes.Buffer
	files, err := r.layerEntries(dir)
	if err != nil {
		return nil, err
	}
	if err := writeLayer(&layerTar, files, m.Created); err != nil {
		return nil, err
	}
	data := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: m.Created}, CreatedBy: strings.Join(r.steps, "; "), Comment: "tools/release",
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: m.Created}
	cf.Config = r.config
	for k, v := range m.annotations() {
		cf.Config.Labels[k] = v
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, m.annotations()).(v1.Image), nil
}

// layerFile is one entry of the image's layer, with its owner.
type layerFile struct {
	entry
	uid, gid int
}

// layerEntries resolves the COPY steps against the build context dir with
// docker build's rules: a directory's contents go into the destination, a
// file goes to the destination or, when it ends in "/", into it. The
// destination's parent directories are added, owned by root.
func (r *recipe) layerEntries(dir string) ([]layerFile, error) {
	byName := map[string]layerFile{}
	for _, c := range r.copies {
		if len(c.srcs) > 1 && !strings.HasSuffix(c.dst, "/") {
			return nil, fmt.Errorf("COPY %v %s: several sources need a destination ending in /", c.srcs, c.dst)
		}
		for _, src := range c.srcs {
			local := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+src)))
			info, err := os.Stat(local)
			if err != nil {
				return nil, fmt.Errorf("COPY %s: %w", src, err)
			}
			dst := strings.TrimPrefix(path.Clean("/"+c.dst), "/")
			if !info.IsDir() && strings.HasSuffix(c.dst, "/") {
				dst = path.Join(dst, filepath.Base(local))
			}
			var entries []entry
			if info.IsDir() {
				if entries, err = walk(local, dst); err != nil {
					return nil, err
				}
				if dst != "" {
					entries = append(entries, entry{name: dst + "/", mode: 0o755})
				}
			} else if entries, err = walk(local, ""); err == nil && len(entries) == 1 {
				entries[0].name = dst
			}
			for _, e := range entries {
				byName[e.name] = layerFile{entry: e, uid: c.uid, gid: c.gid}
			}
		}
	}
	for name := range byName {
		for d := path.Dir(strings.TrimSuffix(name, "/")); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := byName[d+"/"]; !ok {
				byName[d+"/"] = layerFile{entry: entry{name: d + "/", mode: 0o755}}
			}
		}
	}
	out := make([]layerFile, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b layerFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}
